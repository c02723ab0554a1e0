#!/usr/bin/env bash
# Build the documentation site into site/, every warning an error (pip install -e ".[docs]"),
# then fail if any page shows raw Sphinx role markup (docs/check_site.py).
cd "$(dirname "$0")/.." || exit 2
NO_MKDOCS_2_WARNING=1 mkdocs build --strict --clean "$@" || exit
quiet=()
for arg in "$@"; do
  case $arg in -q | --quiet) quiet=(--quiet) ;; esac
done
python docs/check_site.py site "${quiet[@]}"
