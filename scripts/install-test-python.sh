#!/usr/bin/env bash
# Installs the Python modules the tests need, only those missing: the APNs stand-in's h2 and
# cryptography, openapi-spec-validator for docs/openapi.yaml, and schemathesis for the API.
# Idempotent and non-interactive. Usage: scripts/install-test-python.sh
set -euo pipefail
PY="${PYTHON:-python3}"

missing=()
"$PY" -c "import h2" >/dev/null 2>&1 || missing+=("h2")
"$PY" -c "import cryptography" >/dev/null 2>&1 || missing+=("cryptography")
"$PY" -c "import openapi_spec_validator" >/dev/null 2>&1 || missing+=("openapi-spec-validator")
# The property-based API tester make test runs against the live server (scripts/schemathesis.sh).
"$PY" -c "import schemathesis, sys; sys.exit(0 if schemathesis.__version__.startswith('4.') else 1)" >/dev/null 2>&1 || missing+=("schemathesis==4.32.5")
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing Python modules: ${missing[*]}"
# A Debian system Python refuses pip without --break-system-packages (PEP 668); a pyenv or venv Python does not need it.
if "$PY" -c "import sys, sysconfig, os; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')) else 1)"; then
  "$PY" -m pip install --quiet --break-system-packages "${missing[@]}"
else
  "$PY" -m pip install --quiet "${missing[@]}"
fi
