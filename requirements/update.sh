#!/usr/bin/env bash
# Regenerate requirements/lock.txt: every dependency of every extra, pinned, for every platform
# and for Python >= 3.11.5 (pymdown-extensions needs 3.11.5). CI and the README's commands install
# with `pip install -c requirements/lock.txt ...`, so a fresh machine on any day gets what CI
# tested. Run after changing a dependency in pyproject.toml, then run the tests and commit both.
# `--upgrade` takes the newest versions the index serves today.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet "uv>=0.5"
python -m uv pip compile pyproject.toml --all-extras --universal --python-version 3.11.5 \
  --annotation-style line --custom-compile-command "bash requirements/update.sh" \
  -o requirements/lock.txt "$@"
