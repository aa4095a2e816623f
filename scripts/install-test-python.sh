#!/usr/bin/env bash
# Installs the Python modules the tests and benches need, only those missing: the APNs stand-in's h2 and
# cryptography, openapi-spec-validator for docs/openapi.yaml, schemathesis for the API, and numpy and scipy, the
# assignment solver's reference (Tests/Terminal/assignment-scipy.sh, bench/assignment.sh).
# Idempotent and non-interactive. Usage: scripts/install-test-python.sh [test|scipy]...   (default: test, every module)
set -euo pipefail
PY="${PYTHON:-python3}"

missing=()
want() { "$PY" -c "$1" >/dev/null 2>&1 || missing+=("$2"); }
scipy() {
  want "import numpy" numpy
  # min_weight_full_bipartite_matching arrived in scipy 1.6.
  want "from scipy.sparse.csgraph import min_weight_full_bipartite_matching" scipy
}
for group in "${@:-test}"; do
  case "$group" in
    test)
      want "import h2" h2
      want "import cryptography" cryptography
      want "import openapi_spec_validator" openapi-spec-validator
      # The property-based API tester make test runs against the live server (scripts/schemathesis.sh).
      want "import schemathesis, sys; sys.exit(0 if schemathesis.__version__.startswith('4.') else 1)" \
        "schemathesis==4.32.5"
      scipy
      ;;
    scipy) scipy ;;
    *) echo "install-test-python: unknown group: $group" >&2; exit 2 ;;
  esac
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing Python modules: ${missing[*]}"
# A Debian system Python refuses pip without --break-system-packages (PEP 668); a pyenv or venv Python does not need it.
if "$PY" -c "import sys, sysconfig, os; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')) else 1)"; then
  "$PY" -m pip install --quiet --break-system-packages "${missing[@]}"
else
  "$PY" -m pip install --quiet "${missing[@]}"
fi
