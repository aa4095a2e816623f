#!/usr/bin/env bash
# Soak: create, run and end TRIPS trips (default 200,000) through a live `enroute serve` and print its
# resident memory every REPORT trips. The reference in the same run is the same server restarted on
# the database the soak left behind: memory after the soak should be close to what a fresh process
# needs for the same data, and flat after the first REPORT trips.
# Trips: rides assigned by ops, one location batch, three in four completed and one cancelled; every
# tenth a delivery through the merchant. Rate limits are off (the driver is one account per role).
set -euo pipefail
cd "$(dirname "$0")/.."
TRIPS="${TRIPS:-200000}"; REPORT="${REPORT:-50000}"; WORKERS="${WORKERS:-8}"; PORT="${PORT:-18300}"
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

FIRST=$(awk -v r="$REPORT" '$1 == "after" && $2 == r { print $5 }' "$WORK/soak.out")
LAST=$(awk '$1 == "after" { v = $5 } END { print v }' "$WORK/soak.out")
# A burst: BURST customers ask for a ride at once with nobody online; each search gives up after 10 s.
BURST="${BURST:-50000}"
rm -f "$WORK"/soak.sqlite*
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

python3 - "$FIRST" "$LAST" "$AFTER" "$FRESH" "$REPORT" "$TRIPS" <<'PY'
import sys
first, last, after, fresh, report, trips = (float(x) for x in sys.argv[1:])
grown = (last - first) * 1024 * 1024 / max(1, trips - report)
print(f"RSS after {int(report):,} trips {first:.1f} MiB, after {int(trips):,} {last:.1f} MiB: {grown:.0f} bytes per trip after the first {int(report):,}")
print(f"RSS at the end {after:.1f} MiB vs the same database in a fresh process {fresh:.1f} MiB: {after / fresh:.2f}x")
PY
