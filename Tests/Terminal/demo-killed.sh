#!/usr/bin/env bash
# `make demo` (scripts/demo.sh) killed with SIGKILL, so that none of its traps run: the server it started (in a session
# of its own, out of reach of the script's group) stops by itself, drained, because the script named itself with
# `--parent-pid`.
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/Terminal/demo-lib.bash
fail() { echo "FAIL: $*"; echo "-- demo stderr"; tail -30 "$WORK/err.txt"; echo "-- server log"
         tail -20 "$WORK/demo/server.log" 2>/dev/null || true; exit 1; }

# As a terminal runs it: leading a process group of its own.
ENROUTE_BIN="$BIN" DEMO_PORT="$PORT" DEMO_DIR="$WORK/demo" DEMO_PROVIDERS=5 python3 -c '
import os, sys
os.setsid(); os.execvp(sys.argv[1], sys.argv[1:])' scripts/demo.sh > "$WORK/out.txt" 2> "$WORK/err.txt" < /dev/null &
DEMO=$!
GROUP=$DEMO
deadline=$((SECONDS + 150))
until curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null; do
  kill -0 "$DEMO" 2>/dev/null || fail "the demo exited before its server answered"
  [ "$SECONDS" -lt "$deadline" ] || fail "the server did not answer within 150 s"
  sleep 0.2
done
SERVER=$(pgrep -f -- "serve --port $PORT --db $WORK/demo/enroute.sqlite" || true)
[ -n "$SERVER" ] || fail "no server process for port $PORT"

kill -KILL "$DEMO"   # the script alone: no trap runs
killed=$SECONDS
deadline=$((SECONDS + 30))
while kill -0 "$SERVER" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the server (pid $SERVER) was still running 30 s after the script was killed"
  sleep 0.2
done
SERVER=""
grep -q 'stopped cleanly' "$WORK/demo/server.log" || fail "the server did not drain and stop cleanly"
echo "ok: the server stopped $((SECONDS - killed)) s after its script was killed"
echo "passed"
