#!/usr/bin/env bash
# Instructions per operation on the request path, counted by callgrind: the same for the same binary and input
# whatever else the machine is doing. `server-bench ops` answers a fixed sequence of requests in process (the router,
# authentication, JSON, the domain, SQLite; no sockets) on a stepped clock with sequential ids; each operation's count
# is (a run with COUNT of them - a run with none) / COUNT, over the same setup.
# Operations: a tracking GET (an order's snapshot, with its auth check), a ride create (Idempotency-Key, card hold,
# trip, change log, ledger), a location batch of FIXES fixes on an assigned ride (filters, presence, path).
# Compares each with bench/callgrind.tsv (the committed figures) and fails when one rose by more than MAX_RISE
# percent (default 5). UPDATE=1 writes the new figures there instead. PROFILE=1 also prints each operation's top
# functions by inclusive count (callgrind_annotate).
# Knobs: COUNT (50 creates and batches), TRACKING (1000 GETs: each costs little beside the run's own variation,
# a few hundred thousand instructions), PREPARE (50, at least COUNT), FIXES (10), SCRATCH (.build), JOBS (swift build -j).
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT="${COUNT:-50}"; TRACKING="${TRACKING:-1000}"; PREPARE="${PREPARE:-50}"; FIXES="${FIXES:-10}"; MAX_RISE="${MAX_RISE:-5}"
UPDATE="${UPDATE:-0}"; PROFILE="${PROFILE:-0}"; SCRATCH="${SCRATCH:-.build}"
for v in COUNT TRACKING PREPARE FIXES MAX_RISE; do
  case "${!v}" in ''|*[!0-9]*|0) echo "bench/callgrind.sh: $v must be a positive number, got '${!v}'" >&2; exit 2 ;; esac
done
for v in UPDATE PROFILE; do
  case "${!v}" in 0|1) ;; *) echo "bench/callgrind.sh: $v must be 0 or 1, got '${!v}'" >&2; exit 2 ;; esac
done
[ "$COUNT" -le "$PREPARE" ] || { echo "bench/callgrind.sh: COUNT ($COUNT) must be at most PREPARE ($PREPARE)" >&2; exit 2; }
scripts/install-deps.sh callgrind
out=$(swift build -c release --scratch-path "$SCRATCH" ${JOBS:+-j "$JOBS"} --product server-bench 2>&1) \
  || { echo "$out" >&2; exit 1; }
BIN="$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)/server-bench"
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
FIGURES=bench/callgrind.tsv
# Swift seeds its hashing per process; the same seed in every run keeps dictionaries' work the same.
export SWIFT_DETERMINISTIC_HASHING=1

# run NAME ARGS...: the total instructions of one `server-bench ops` run under callgrind.
run() {
  local name="$1"; shift
  valgrind --tool=callgrind --callgrind-out-file="$WORK/$name.out" --log-file="$WORK/$name.log" \
    "$BIN" ops --prepare "$PREPARE" --fixes "$FIXES" --dir "$WORK" "$@" > "$WORK/$name.txt" \
    || { echo "server-bench ops $* failed under callgrind:" >&2; cat "$WORK/$name.txt" "$WORK/$name.log" >&2; exit 1; }
  awk '/^(summary|totals):/ { print $2; exit }' "$WORK/$name.out"
}

echo "callgrind: $TRACKING tracking GETs, $COUNT creates, $COUNT batches over a setup of $PREPARE customers ($(git rev-parse --short HEAD)," \
  "$(date -u +%Y-%m-%d), valgrind $(valgrind --version | sed 's/valgrind-//'))"
base=$(run base)
declare -A per
declare -A count=([tracking]="$TRACKING" [creates]="$COUNT" [batches]="$COUNT")
for op in tracking creates batches; do
  total=$(run "$op" "--$op" "${count[$op]}")
  per[$op]=$(( (total - base) / count[$op] ))
done

python3 - "$FIGURES" "$UPDATE" "$MAX_RISE" "$base" "${per[tracking]}" "${per[creates]}" "${per[batches]}" "$FIXES" <<'PY'
import sys
path, update, max_rise, base = sys.argv[1], sys.argv[2] == "1", float(sys.argv[3]), int(sys.argv[4])
fixes = int(sys.argv[8])
names = {"tracking": "tracking GET", "creates": "ride create", "batches": f"location batch ({fixes} fixes)"}
now = dict(zip(["tracking", "creates", "batches"], map(int, sys.argv[5:8])))
committed = {}
try:
    for line in open(path):
        if line.strip() and not line.startswith("#"):
            op, count = line.split("\t")[:2]
            committed[op] = int(count)
except FileNotFoundError:
    pass
print(f"setup alone: {base:,} instructions")
print(f"{'operation':28} {'instructions/op':>16} {'committed':>12} {'change':>8}")
risen = []
for op, count in now.items():
    before = committed.get(op)
    change = f"{(count / before - 1) * 100:+.1f}%" if before else "new"
    print(f"{names[op]:28} {count:16,} {before if before else '-':>12,} {change:>8}" if before else
          f"{names[op]:28} {count:16,} {'-':>12} {change:>8}")
    if before and count > before * (1 + max_rise / 100):
        risen.append(f"{names[op]}: {count:,} > {before:,} + {max_rise:g}%")
print(f"RESULT callgrind {now['tracking']} {now['creates']} {now['batches']}")
if update:
    with open(path, "w") as f:
        f.write("# operation\tinstructions per operation (bench/callgrind.sh; UPDATE=1 rewrites this file)\n")
        for op, count in now.items():
            f.write(f"{op}\t{count}\n")
    print(f"wrote {path}")
elif risen:
    sys.exit("instructions per operation rose by more than the allowed share:\n  " + "\n  ".join(risen) +
             "\n(if the rise is intended, say why in the commit and run UPDATE=1 bench/callgrind.sh)")
elif not committed:
    sys.exit(f"no committed figures in {path}: run UPDATE=1 bench/callgrind.sh")
PY
if [ "$PROFILE" = 1 ]; then
  for op in tracking creates batches; do
    echo "== $op: top functions by inclusive count (the whole run, setup included; in $WORK/$op.out)"
    callgrind_annotate --inclusive=yes "$WORK/$op.out" 2>/dev/null | swift demangle --simplified | sed -n '1,60p' \
      | cut -c1-200 | awk 'NR > 20 && n++ < 30'
  done
fi
