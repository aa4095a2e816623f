#!/usr/bin/env bash
# The assignment solver (EnRouteDomain's Assignment) against scipy, and its time at dispatch's size, in one run:
#   1. COUNT (1000) random dense instances up to MAX_SIZE × MAX_SIZE (300; square and rectangular, integer and float
#      costs, numpy from SEED) solved by scipy.optimize.linear_sum_assignment and by `server-bench assignment-dense`:
#      each Swift assignment checked (distinct columns, min(rows, columns) rows assigned) and its total compared with
#      scipy's, integer costs exactly and float costs within 1e-9 relative; prints equal / worse / better and both
#      sides' solve times. Any total that differs fails the bench.
#   2. `server-bench assignment`: RUNS (200) random ROWS × COLUMNS instances (2,000 × 5,000) with CANDIDATES (20)
#      candidates each, costs in road seconds (30 to 1,800), in two layouts: `uniform` (candidates drawn at random)
#      and `city` (each request's nearest providers, half the requests crowded downtown, so some go unserved). Prints
#      p50 / p99 / max solve time and CPU, p99 against the goal (100 ms) and the matching window (WINDOW, 2 s); each
#      run's time is in bench/out/assignment/LAYOUT.txt. The first SCIPY_RUNS (3) instances of each layout are solved
#      by scipy too, timed in the same run: min_weight_full_bipartite_matching (it refuses an instance where not every
#      request can be matched) and linear_sum_assignment on the dense matrix with missing pairs at a cost above any
#      assignment's total; their assigned count and total must equal Swift's.
# Knobs: COUNT, MAX_SIZE, SEED (1), RUNS, ROWS, COLUMNS, CANDIDATES, WINDOW, SCIPY_RUNS, SCRATCH (.build).
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT="${COUNT:-1000}"; MAX_SIZE="${MAX_SIZE:-300}"; SEED="${SEED:-1}"; RUNS="${RUNS:-200}"
ROWS="${ROWS:-2000}"; COLUMNS="${COLUMNS:-5000}"; CANDIDATES="${CANDIDATES:-20}"; WINDOW="${WINDOW:-2}"
SCIPY_RUNS="${SCIPY_RUNS:-3}"; SCRATCH="${SCRATCH:-.build}"
for v in COUNT MAX_SIZE SEED RUNS ROWS COLUMNS CANDIDATES SCIPY_RUNS; do
  case "${!v}" in ''|*[!0-9]*) echo "bench/assignment.sh: $v must be a whole number, got '${!v}'" >&2; exit 2 ;; esac
done
scripts/install-deps.sh build
scripts/install-test-python.sh scipy
# swift build prints its errors on standard output: show them when it fails.
out=$(swift build -c release --scratch-path "$SCRATCH" --product server-bench 2>&1) || { echo "$out" >&2; exit 1; }
BIN="$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)/server-bench"
OUT=bench/out/assignment; mkdir -p "$OUT" "$SCRATCH"
WORK=$(mktemp -d "$SCRATCH/bench-assignment.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

python3 bench/cost.py header bench/assignment.sh
python3 -c 'import numpy, scipy; print(f"scipy {scipy.__version__}, numpy {numpy.__version__}")'
status=0
echo "== dense: $COUNT instances up to $MAX_SIZE × $MAX_SIZE (seed $SEED), scipy then Swift"
python3 bench/assignment.py dense-make "$WORK/dense.bin" "$WORK/scipy.jsonl" --count "$COUNT" --max-size "$MAX_SIZE" \
  --seed "$SEED"
"$BIN" assignment-dense --instances "$WORK/dense.bin" > "$WORK/swift.out"
python3 bench/assignment.py dense-compare "$WORK/dense.bin" "$WORK/scipy.jsonl" "$WORK/swift.out" || status=1

for layout in uniform city; do
  echo "== sparse, layout $layout"
  "$BIN" assignment --layout "$layout" --rows "$ROWS" --columns "$COLUMNS" --candidates "$CANDIDATES" --runs "$RUNS" \
    --seed "$SEED" --window "$WINDOW" --write "$WORK/$layout.txt" --write-runs "$SCIPY_RUNS" > "$OUT/$layout.txt"
  grep -v -e '^run ' -e '^instance ' "$OUT/$layout.txt"
  if [ "$SCIPY_RUNS" -gt 0 ]; then
    echo "-- the first $SCIPY_RUNS instances with scipy"
    python3 bench/assignment.py sparse-scipy "$WORK/$layout.txt" "$OUT/$layout.txt" || status=1
  fi
done
[ "$status" = 0 ] || echo "bench/assignment.sh: the Swift solver and scipy disagree (see above)" >&2
exit "$status"
