#!/usr/bin/env bash
# Candidate search among 100,000 online providers: the dispatcher's grid query plus ranking, p50 and p99,
# against a brute-force scan of the same positions in the same run (goal: p99 <= 200 us), and the process's CPU time
# per query of each.
set -euo pipefail
cd "$(dirname "$0")/.."
PROVIDERS="${PROVIDERS:-100000}"; QUERIES="${QUERIES:-20000}"; BRUTE="${BRUTE:-300}"; SECONDS_LIMIT="${SECONDS_LIMIT:-30}"
SCRATCH="${SCRATCH:-.build}"
swift build -c release --scratch-path "$SCRATCH" --product server-bench >/dev/null
BIN="$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)/server-bench"
python3 bench/cost.py header bench/candidates.sh
"$BIN" candidates --providers "$PROVIDERS" --queries "$QUERIES" --brute-queries "$BRUTE" --seconds "$SECONDS_LIMIT"
