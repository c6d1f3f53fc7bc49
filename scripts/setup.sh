#!/usr/bin/env bash
# Set up what is missing: Debian packages (when root), the virtual environment, pip packages.
# Idempotent and quick when nothing changed. Usage: bash scripts/setup.sh [--test]
set -euo pipefail
cd "$(dirname "$0")/.."

want_test=0
[[ "${1:-}" == "--test" ]] && want_test=1

# Fonts that shape the pages (their hashes enter sample keys; -extra and noto-cjk: the italic
# and Chinese faces of the paper style) and the shared libraries the Blender module (bpy)
# loads even when headless.
APT_PACKAGES=(fonts-dejavu-core fonts-dejavu-extra fonts-noto-cjk libgl1 libxi6 libxrender1 libxkbcommon0 libsm6 libxfixes3 libxxf86vm1)
# The tests open the HTML report in Debian's headless Chromium (driven by Playwright).
if ((want_test)); then APT_PACKAGES+=(chromium); fi
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "setup: apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing Debian packages (run as root to install): ${missing[*]}" >&2
  fi
fi

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
if [[ ! -x .venv/bin/python ]]; then
  echo "setup: creating .venv with $($PY --version)"
  "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade "pip==25.3"
fi

extras=""
if ((want_test)); then extras="[test]"; fi
stamp=".venv/.shredfold-$(sha256sum pyproject.toml | cut -c1-16)${extras}"
if [[ ! -f "$stamp" ]]; then
  echo "setup: pip install -e .${extras}"
  .venv/bin/python -m pip install -q -e ".${extras}"
  rm -f .venv/.shredfold-*
  touch "$stamp"
  # The test stamp implies the plain one.
  if ((want_test)); then touch ".venv/.shredfold-$(sha256sum pyproject.toml | cut -c1-16)"; fi
fi
# Byte-compile the package: every Snakemake job is a new interpreter, and where
# PYTHONDONTWRITEBYTECODE is set (as on the machine this was measured on) each would compile the sources
# again (~0.15 s a job, ~190 jobs in the default run). Quick when nothing changed.
.venv/bin/python -m compileall -q src
