#!/usr/bin/env bash
# Fan-out: `enroute serve` on loopback, 10,000 SSE watchers on one ride's events, a provider posting one
# fix at a time; the time from posting each fix to each watcher reading its driverMoved. Prints p50/p99
# per delivery and per fix (the last watcher), and the ratio to the goal (p99 <= 10 ms). The client
# runs in its own process on the same cores. Loops are bounded by FIXES and SECONDS_LIMIT.
set -euo pipefail
cd "$(dirname "$0")/.."
WATCHERS="${WATCHERS:-10000}"; FIXES="${FIXES:-100}"; SECONDS_LIMIT="${SECONDS_LIMIT:-180}"; PORT="${PORT:-18211}"
SCRATCH="${SCRATCH:-.build}"
swift build -c release --scratch-path "$SCRATCH" --product server-bench >/dev/null
swift build -c release --scratch-path "$SCRATCH" --product enroute >/dev/null
BIN="$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)"
WORK=$(mktemp -d)
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
"$BIN/enroute" serve --port "$PORT" --db "$WORK/fanout.sqlite" --max-connections $((WATCHERS + 1000)) --idle-timeout 600 > "$WORK/server.log" 2>&1 &
SERVER=$!
cleanup() { kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
CUSTOMER=$("$BIN/enroute" token --db "$WORK/fanout.sqlite" --account c-fanout --role customer)
PROVIDER=$("$BIN/enroute" token --db "$WORK/fanout.sqlite" --account p-fanout --role provider)
"$BIN/server-bench" fanout --port "$PORT" --customer-token "$CUSTOMER" --provider-token "$PROVIDER" \
  --watchers "$WATCHERS" --fixes "$FIXES" --seconds "$SECONDS_LIMIT"
