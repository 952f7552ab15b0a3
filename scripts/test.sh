#!/usr/bin/env bash
# Install Qoder Desktop with its test extras into .venv and run every check and test.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test]"
.venv/bin/ruff check qoder_desktop tests tools
.venv/bin/mypy qoder_desktop
.venv/bin/lint-imports
# Two workers (pytest-xdist): every server in the tests binds port 0 and every Xvfb
# picks its display with -displayfd, so the workers never clash.
QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest -q -n 2 "$@"
