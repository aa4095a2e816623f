#!/usr/bin/env bash
# Installs OSRM (the PyPI package osrm-bindings: osrm-extract, osrm-contract, osrm-routed and the Python API) into
# a project-local virtualenv, .build/osrm-venv, for bench/routing.sh. Idempotent: does nothing when it is there.
# Prints the venv's directory on stdout. PYTHON overrides the Python 3.12 used.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${OSRM_VENV:-$PWD/.build/osrm-venv}"
PYTHON="${PYTHON:-/root/.pyenv/versions/3.12.1/bin/python}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3.12
if ! "$VENV/bin/python" -c 'import osrm' >/dev/null 2>&1; then
  echo "installing osrm-bindings into $VENV" >&2
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet osrm-bindings >&2
fi
echo "$VENV"
