#!/usr/bin/env bash
# Build the documentation site into site/, every warning an error (pip install -e ".[docs]").
cd "$(dirname "$0")/.." && NO_MKDOCS_2_WARNING=1 mkdocs build --strict --clean "$@"
