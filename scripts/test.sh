#!/usr/bin/env bash
# README command 2: set up what is missing (with test tools), then run the whole test suite,
# slow end-to-end tests included. Extra arguments go to pytest (e.g. -m "not slow").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
.venv/bin/ruff check src tests bench
exec .venv/bin/python -m pytest -n 2 --dist loadfile "$@"
