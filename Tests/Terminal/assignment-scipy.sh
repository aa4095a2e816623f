#!/usr/bin/env bash
# The assignment solver against scipy on the debug build's server-bench (bench/assignment.sh at a small size):
#   - 200 random dense instances up to 60 × 60 (seed 7): every total equals scipy.optimize.linear_sum_assignment's;
#   - the comparison itself fails on an answer made worse (two rows' columns swapped, its total recomputed);
#   - two 200 × 500 sparse instances with 5 candidates each, where not every request can be served: as many assigned
#     and the same total as linear_sum_assignment with missing pairs at a prohibitive cost.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN="${ENROUTE_BIN:-$(swift build --show-bin-path)/enroute}"
BENCH="$(dirname "$BIN")/server-bench"
scripts/install-test-python.sh scipy
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

python3 bench/assignment.py dense-make "$WORK/dense.bin" "$WORK/scipy.jsonl" --count 200 --max-size 60 --seed 7
"$BENCH" assignment-dense --instances "$WORK/dense.bin" > "$WORK/swift.out"
fail() { echo "FAIL: $1:"; cat "$2"; exit 1; }
python3 bench/assignment.py dense-compare "$WORK/dense.bin" "$WORK/scipy.jsonl" "$WORK/swift.out" \
  > "$WORK/compare.txt" || fail "the Swift solver differs from scipy" "$WORK/compare.txt"
grep -q "equal 200 / worse 0 / better 0" "$WORK/compare.txt" || fail "not 200 equal" "$WORK/compare.txt"

# An answer with two rows' columns swapped (in the first integer instance of at least 2 × 2), its total recomputed.
python3 - "$WORK" <<'PY'
import sys
sys.path.insert(0, "bench")
import assignment, json
work = sys.argv[1]
matrices = assignment.read_dense(f"{work}/dense.bin")
refs = [json.loads(line) for line in open(f"{work}/scipy.jsonl")]
k = next(i for i, r in enumerate(refs) if r["kind"] == "int-road" and min(r["rows"], r["cols"]) >= 2)
lines = open(f"{work}/swift.out").read().splitlines()
fields = lines[k].split()
columns = [int(v) for v in fields[3:]]
a, b = [row for row, column in enumerate(columns) if column >= 0][:2]
columns[a], columns[b] = columns[b], columns[a]
total = sum(matrices[k][row, column] for row, column in enumerate(columns) if column >= 0)
lines[k] = " ".join(fields[:2] + [repr(float(total))] + [str(c) for c in columns])
open(f"{work}/worse.out", "w").write("\n".join(lines) + "\n")
PY
if python3 bench/assignment.py dense-compare "$WORK/dense.bin" "$WORK/scipy.jsonl" "$WORK/worse.out" \
  > "$WORK/worse.txt"; then
  fail "an answer made worse passed the comparison" "$WORK/worse.txt"
fi
grep -q "worse 1 " "$WORK/worse.txt" || fail "the worse answer was not counted worse" "$WORK/worse.txt"

"$BENCH" assignment --layout city --rows 200 --columns 500 --candidates 5 --runs 2 --seed 7 --write "$WORK/sparse.txt" \
  --write-runs 2 > "$WORK/sparse.out"
python3 bench/assignment.py sparse-scipy "$WORK/sparse.txt" "$WORK/sparse.out" > "$WORK/sparse-scipy.txt" \
  || fail "the sparse instances differ from scipy" "$WORK/sparse-scipy.txt"
grep -q "refuses" "$WORK/sparse-scipy.txt" \
  || fail "every request could be served, so that case went untested" "$WORK/sparse-scipy.txt"
echo "ok: 200 dense instances equal to scipy's totals, a worse answer caught, 2 sparse instances equal"
