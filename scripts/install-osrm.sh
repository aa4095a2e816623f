#!/usr/bin/env bash
# Installs OSRM (the PyPI package osrm-bindings: osrm-extract, osrm-contract, osrm-routed and the Python API
# `osrm.OSRM`) into a virtual environment of the project's, for side-by-side checks against EnRoute's router.
# Idempotent and non-interactive. The wheels exist for CPython 3.12 only: it uses the first python3.12 found
# (PATH, then pyenv's versions), and says so plainly when there is none.
# Usage: scripts/install-osrm.sh [DIR]   (default .build/osrm-venv; prints DIR's bin folder of OSRM's tools)
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="${1:-.build/osrm-venv}"
VERSION="${OSRM_BINDINGS_VERSION:-26.10.0}"

tools() { "$DIR/bin/python" -c 'import osrm, os; print(os.path.join(os.path.dirname(osrm.__file__), "bin"))'; }

if [ -x "$DIR/bin/python" ] && "$DIR/bin/python" -c 'import osrm' 2>/dev/null; then
  tools
  exit 0
fi

python=""
for candidate in python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3.12 /root/.pyenv/versions/3.12*/bin/python3.12; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
    python="$candidate"; break
  fi
done
if [ -z "$python" ]; then
  echo "install-osrm: osrm-bindings ships wheels for CPython 3.12 only, and no python3.12 was found (PATH or ~/.pyenv/versions)" >&2
  exit 1
fi
echo "install-osrm: osrm-bindings $VERSION into $DIR with $python" >&2
"$python" -m venv "$DIR"
"$DIR/bin/pip" install -q --disable-pip-version-check "osrm-bindings==$VERSION" >&2
tools
