#!/usr/bin/env bash
# A few seconds of `server-bench city` (bench/city.sh's load) against the built server at a tiny level: every live
# trip's fixes reach every watcher of it (none missed), no fix POST fails, and the latencies read are plausible.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN="${ENROUTE_BIN:-$(swift build --show-bin-path)/enroute}"
BENCH="$(dirname "$BIN")/server-bench"
WORK=$(mktemp -d)
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
export ENROUTE_JWT_SECRET="city-smoke-secret-0123456789"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
"$BIN" serve --port "$PORT" --db "$WORK/city.sqlite" --rate-limits off > "$WORK/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 100); do (echo > "/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
timeout 60 "$BENCH" city --port "$PORT" --pid "$SERVER" --providers 40 --trips 10 --watchers 20 --seconds 3 --period 1 --senders 4 \
  > "$WORK/out.txt" 2>&1 || { echo "FAIL: server-bench city exited $?"; cat "$WORK/out.txt"; exit 1; }
python3 - "$WORK/out.txt" <<'PY'
import sys
text = open(sys.argv[1]).read()
line = next((l for l in text.splitlines() if l.startswith("RESULT ")), None)
assert line, f"no RESULT line:\n{text}"
f = line.split()
p50, p99, deliveries, missed, errors, late = float(f[4]), float(f[5]), int(f[7]), int(f[8]), int(f[10]), int(f[11])
# 10 trips, 2 watchers each, about 2 fixes each in the counted window.
assert deliveries >= 20, f"only {deliveries} deliveries timed:\n{text}"
assert missed == 0 and errors == 0 and late == 0, f"missed {missed}, failed POSTs {errors}, late {late}:\n{text}"
assert 0 <= p50 <= p99 < 1000, f"implausible latencies p50 {p50} p99 {p99}:\n{text}"
print(f"ok: {deliveries} driverMoved deliveries timed, none missed, p50 {p50:.1f} ms, p99 {p99:.1f} ms")
PY
