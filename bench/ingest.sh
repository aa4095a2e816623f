#!/usr/bin/env bash
# Location ingest with the path persisted, in batches of 50, against raw SQLite inserts of the same rows
# into the same table, in one run. Prints fixes/s for each and the ratios (goals: >= 200,000 fixes/s,
# >= 0.5x raw), and the CPU time per fix against raw SQLite's per row (goal: <= 1x): this one process's
# getrusage over each phase, the uploading tasks (the client) and the probes included in the service's.
# The per-50-row reference runs ROUNDS times (3); ratios over it are withheld when its rounds spread more
# than MAX_SPREAD per cent (10). Every loop is bounded by its count and by SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."
PROVIDERS="${PROVIDERS:-200}"; BATCHES="${BATCHES:-50}"; CONCURRENCY="${CONCURRENCY:-32}"; SECONDS_LIMIT="${SECONDS_LIMIT:-60}"
ROUNDS="${ROUNDS:-3}"; MAX_SPREAD="${MAX_SPREAD:-10}"
SCRATCH="${SCRATCH:-.build}"
swift build -c release --scratch-path "$SCRATCH" --product server-bench >/dev/null
BIN="$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)/server-bench"
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
python3 bench/cost.py header bench/ingest.sh
"$BIN" ingest --providers "$PROVIDERS" --batches "$BATCHES" --batch 50 --concurrency "$CONCURRENCY" --seconds "$SECONDS_LIMIT" \
  --rounds "$ROUNDS" --max-spread "$MAX_SPREAD" --dir "$WORK"
if [ "$(python3 bench/cost.py probe)" = yes ]; then
  echo "  instructions: not counted (the service and raw SQLite are phases of one process; perf stat counts processes)"
else
  echo "  instructions: not counted ($(python3 bench/cost.py probe))"
fi
