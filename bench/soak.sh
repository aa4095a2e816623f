#!/usr/bin/env bash
# Soak: create, run and end TRIPS trips (default 200,000) through a live `enroute serve` and print its
# resident memory, its rate and its CPU time per trip every REPORT trips. The reference in the same run is
# the same server restarted on the database the soak left behind: memory after the soak should be close to
# what a fresh process needs for the same data.
# Trips: rides assigned by ops, one location batch, three in four completed and one cancelled; every
# tenth a delivery through the merchant. Rate limits are off (the driver is one account per role).
#
# It fails when the server drifts once warm (after the first WARMUP trips, default 50,000, when every
# cache has filled): memory grows by more than MAX_BYTES_PER_TRIP (default 200) per trip, or the CPU
# time per trip of a later interval is more than MAX_CPU_RATIO (default 1.25) times the first interval's
# after the warm-up, or its rate falls below MIN_RATE_RATIO (default 0.8) times that interval's.
# It also fails when settlements fall behind: the server's payment lag (how long the oldest new payment
# job waited for the worker) above MAX_PAYMENT_LAG seconds (default 30) at any report once warm.
set -euo pipefail
cd "$(dirname "$0")/.."
TRIPS="${TRIPS:-200000}"; REPORT="${REPORT:-25000}"; WARMUP="${WARMUP:-50000}"; WORKERS="${WORKERS:-8}"; PORT="${PORT:-18300}"
MAX_BYTES_PER_TRIP="${MAX_BYTES_PER_TRIP:-200}"; MAX_PAYMENT_LAG="${MAX_PAYMENT_LAG:-30}"; MAX_CPU_RATIO="${MAX_CPU_RATIO:-1.25}"; MIN_RATE_RATIO="${MIN_RATE_RATIO:-0.8}"
(( WARMUP % REPORT == 0 && TRIPS > WARMUP )) || { echo "soak: WARMUP ($WARMUP) must be a multiple of REPORT ($REPORT) and below TRIPS ($TRIPS)" >&2; exit 2; }
# SERVE_FLAGS: more `enroute serve` flags for both runs, e.g. "--ended-trip-cache 0".
SCRATCH="${SCRATCH:-.build}"
scripts/install-deps.sh build
# swift build prints its errors on standard output: show them when it fails.
build() { local out; out=$(swift build -c release --scratch-path "$SCRATCH" --product "$1" 2>&1) || { echo "$out" >&2; exit 1; }; }
build server-bench
build enroute
BIN="$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)"
WORK=$(mktemp -d)
SECRET="soak-secret-$(date +%s)-0123456789"
OPS=$("$BIN/enroute" token --secret "$SECRET" --account ops-1 --role ops)   # /metrics is the operators'
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
wait_port() { for _ in $(seq 1 100); do (echo > "/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }
rss_mib() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
serve() {
  "$BIN/enroute" seed --city helsinki --db "$WORK/soak.sqlite" >/dev/null
  "$BIN/enroute" serve --port "$PORT" --db "$WORK/soak.sqlite" --secret "$SECRET" --rate-limits off ${SERVE_FLAGS:-} > "$WORK/server.log" 2>&1 &
  SERVER=$!
  wait_port "$PORT"
}

serve
"$BIN/server-bench" soak --port "$PORT" --secret "$SECRET" --pid "$SERVER" --trips "$TRIPS" --report "$REPORT" --workers "$WORKERS" | tee "$WORK/soak.out"
AFTER=$(rss_mib "$SERVER")
kill -TERM "$SERVER"; wait "$SERVER" || true; SERVER=""

# The reference: the same server, restarted on the same database, after one read.
serve
curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null
FRESH=$(rss_mib "$SERVER")
kill -TERM "$SERVER"; wait "$SERVER" || true; SERVER=""

# A burst: BURST customers ask for a ride at once with nobody online; each search gives up after 10 s.
BURST="${BURST:-50000}"
rm -rf "$WORK"/soak.sqlite*
SERVE_FLAGS="${SERVE_FLAGS:-} --dispatch-limit 10" serve
BASE=$(rss_mib "$SERVER")
"$BIN/server-bench" soak --port "$PORT" --secret "$SECRET" --pid "$SERVER" --burst "$BURST" --workers "$WORKERS" | tee "$WORK/burst.out"
SEARCHING=$(rss_mib "$SERVER")
for _ in $(seq 1 120); do
  curl -s -H "Authorization: Bearer $OPS" "http://127.0.0.1:$PORT/metrics" | awk -v n="$BURST" '/^enroute_dispatch_searches_total\{result="noProviderFound"\}/ && $2 + 0 >= n { found = 1 } END { exit !found }' && break
  sleep 1
done
sleep 35   # one period of the server's memory trim (30 s)
ENDED=$(rss_mib "$SERVER")
kill -TERM "$SERVER"; wait "$SERVER" || true; SERVER=""
python3 - "$BASE" "$SEARCHING" "$ENDED" "$BURST" <<'PY'
import sys
base, searching, ended, burst = (float(x) for x in sys.argv[1:])
print(f"burst of {int(burst):,} searching rides: RSS {base:.1f} -> {searching:.1f} MiB ({(searching - base) * 1048576 / burst:.0f} bytes per searching ride); "
      f"after every search gave up and one trim period: {ended:.1f} MiB")
PY

python3 - "$WORK/soak.out" "$AFTER" "$FRESH" "$WARMUP" "$MAX_BYTES_PER_TRIP" "$MAX_CPU_RATIO" "$MIN_RATE_RATIO" "$MAX_PAYMENT_LAG" <<'PY'
import re, statistics, sys
sys.path.insert(0, "bench")
import cost
print(cost.header("bench/soak.sh"))
out, after, fresh, warmup, max_bytes, max_cpu, min_rate, max_lag = sys.argv[1], *(float(x) for x in sys.argv[2:])
rows = [(int(m[1]), float(m[2]), float(m[3]), float(m[4]), float(m[5])) for m in
        re.finditer(r"after +(\d+) trips: RSS +([\d.]+) MiB .*?last \d+: ([\d.]+) trips/s, ([\d.]+) ms server CPU per trip; "
                    r"payment lag (-?[\d.]+) s", open(out).read())]
warm = [r for r in rows if r[0] >= warmup]
later = [r for r in warm if r[0] > warmup]
if not warm or not later:
    sys.exit("soak: no reports after the warm-up to judge")
(_, rss0, _, _, _), (trips, rss1, _, _, _) = warm[0], warm[-1]
grown = (rss1 - rss0) * 1048576 / (trips - warmup)
base_rate, base_cpu = later[0][2], later[0][3]
worst_rate = min(r[2] for r in later) / base_rate
worst_cpu = max(r[3] for r in later) / base_cpu
print(f"RSS after {int(warmup):,} trips {rss0:.1f} MiB, after {trips:,} {rss1:.1f} MiB: {grown:.0f} bytes per trip once warm (limit {max_bytes:.0f})")
print(f"once warm, against the first interval after the warm-up ({base_rate:.1f} trips/s, {base_cpu:.2f} ms CPU per trip): "
      f"slowest interval {worst_rate:.2f}x its rate (limit {min_rate}), costliest {worst_cpu:.2f}x its CPU per trip (limit {max_cpu})")
print(f"RSS at the end {after:.1f} MiB vs the same database in a fresh process {fresh:.1f} MiB: {after / fresh:.2f}x")
# Cost per trip in µs, like the other benches' cost per op (the server's CPU, user + system, from /proc).
cpu_us = [r[3] * 1000 for r in later]
print(f"cost per trip once warm: {statistics.median(cpu_us):.0f} µs server CPU (median of {len(cpu_us)} intervals, "
      f"spread {cost.spread_text(cpu_us)}); the driver's CPU not counted")
note = cost.instructions_note()
if note:
    print("  " + note)
print(f"RESULT soak-cost {statistics.median(cpu_us):.1f} {(cost.spread(cpu_us) or 0) * 100:.1f} {base_rate:.1f}")
worst_lag = max(r[4] for r in warm)
print(f"payment lag once warm: at most {worst_lag:.1f} s (limit {max_lag:.0f})")
failed = [what for what, bad in (("memory grows", grown > max_bytes), ("the rate falls", worst_rate < min_rate),
                                  ("CPU per trip rises", worst_cpu > max_cpu),
                                  ("settlements fall behind", worst_lag > max_lag or worst_lag < 0)) if bad]
if failed:
    sys.exit("soak: FAILED: " + ", ".join(failed) + " once warm")
print("soak: flat once warm")
PY
