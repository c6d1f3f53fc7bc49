#!/usr/bin/env bash
# README command 1: set up what is missing, then build the leaderboard and the HTML report of
# the default spec.
# Extra arguments go to Snakemake (e.g. --config spec=specs/paper.yaml, -n).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/snakemake --workflow-profile workflow/profiles/default --cores all results/leaderboard.csv results/report.html "$@"
