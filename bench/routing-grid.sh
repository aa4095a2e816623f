#!/usr/bin/env bash
# Contraction-hierarchy build and query speed on seeded random grids (the tests' generator): for each size,
# the edge-based graph and hierarchy build time and peak RSS, CH and plain Dijkstra query p50/p99 on the same
# random pairs in the same run, the speed-up, the CPU time per query of each (the thread's, summed over the queries),
# and the weight mismatches against Dijkstra (must be 0).
# Usage: bench/routing-grid.sh [sizes…]   (default 60 150 300; PAIRS and SEED from the environment; CH_SETTLE,
# CH_HOPS, CH_EST_SETTLE, CH_EST_HOPS and CH_STALE override the contraction's witness bounds for tuning)
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS="${PAIRS:-1000}"; SEED="${SEED:-1}"
SIZES=("$@"); [ ${#SIZES[@]} -gt 0 ] || SIZES=(60 150 300)
swift build -c release --product routing-bench >/dev/null
BIN="$(swift build -c release --show-bin-path)/routing-bench"
python3 bench/cost.py header bench/routing-grid.sh
why=$(python3 bench/cost.py probe); [ "$why" = yes ] && why="the queries are timed in process; perf stat counts processes"
echo "instructions: not counted ($why)"
status=0
for size in "${SIZES[@]}"; do
  echo "== grid $size"
  "$BIN" grid --size "$size" --pairs "$PAIRS" --seed "$SEED" || status=1
done
exit $status
