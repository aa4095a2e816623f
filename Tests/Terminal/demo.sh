#!/usr/bin/env bash
# `make demo` (scripts/demo.sh) on the built `enroute`, in its own process group as a terminal runs it: it prints the
# ops console's address and a share link; the link's state answers with steps, the console's token opens a session,
# the overview shows providers online and trips under way; then SIGINT to the group (Ctrl-C) stops the simulator and
# the server (a session of its own), the script exits 0 and no process of either is left.
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/Terminal/demo-lib.bash
fail() { echo "FAIL: $*"; echo "-- demo stdout"; tail -30 "$WORK/out.txt"; echo "-- demo stderr"; tail -30 "$WORK/err.txt"
         echo "-- server log"; tail -20 "$WORK/demo/server.log" 2>/dev/null || true; exit 1; }
started=$SECONDS

# As a terminal runs it: leading a session and process group of its own (the group Ctrl-C signals), with SIGINT at
# its default (a background job of a script starts with SIGINT ignored, and bash cannot trap a signal ignored on entry).
ENROUTE_BIN="$BIN" DEMO_PORT="$PORT" DEMO_DIR="$WORK/demo" DEMO_PROVIDERS=20 DEMO_DEMAND=1,4 python3 -c '
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL); signal.signal(signal.SIGQUIT, signal.SIG_DFL)
os.setsid(); os.execvp(sys.argv[1], sys.argv[1:])' scripts/demo.sh > "$WORK/out.txt" 2> "$WORK/err.txt" < /dev/null &
DEMO=$!
deadline=$((SECONDS + 10))
until [ "$(ps -o pgid= -p "$DEMO" | tr -d ' ')" = "$DEMO" ]; do   # python's setsid, then exec
  [ "$SECONDS" -lt "$deadline" ] || fail "the demo did not become the leader of its process group"
  sleep 0.1
done
GROUP=$DEMO

deadline=$((SECONDS + 150))
until grep -q '^  share link:' "$WORK/out.txt"; do
  kill -0 "$DEMO" 2>/dev/null || fail "the demo exited before printing its links"
  [ "$SECONDS" -lt "$deadline" ] || fail "no links printed within 150 s"
  sleep 0.5
done
SERVER=$(pgrep -f -- "serve --port $PORT --db $WORK/demo/enroute.sqlite" || true)
[ -n "$SERVER" ] || fail "no server process for port $PORT"
CONSOLE=$(sed -n 's/^  ops console: *//p' "$WORK/out.txt")
SHARE=$(sed -n 's/^  share link: *\([^ ]*\).*/\1/p' "$WORK/out.txt")
echo "ok: links printed after $((SECONDS - started)) s"
case "$CONSOLE" in "http://127.0.0.1:$PORT/ops#token="?*) ;; *) fail "console address '$CONSOLE'" ;; esac
case "$SHARE" in "http://127.0.0.1:$PORT/share/"?*) ;; *) fail "share link '$SHARE'" ;; esac
OPS=${CONSOLE#*#token=}

# The share link needs no account: its state has the order's steps.
curl -sf "$SHARE/state" > "$WORK/state.json" || fail "GET the share link's state did not answer 200"
python3 - "$WORK/state.json" <<'PY' || fail "the share state has no steps"
import json, sys
state = json.load(open(sys.argv[1]))
assert state["kind"] == "delivery" and len(state["steps"]) > 0, state
print(f"ok: the share link shows {len(state['steps'])} steps, ETA '{state['eta']}'")
PY
[ "$(curl -s -o /dev/null -w '%{http_code}' "$SHARE")" = 200 ] || fail "the share page is not 200"

# The console's page, the session its token buys (a cookie) and the live feed that cookie opens.
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/ops")" = 200 ] || fail "GET /ops is not 200"
SESSION=$(curl -s -o /dev/null -D - -X POST "http://127.0.0.1:$PORT/ops/session" -H "Authorization: Bearer $OPS")
grep -q '^HTTP/1.1 204' <<<"$SESSION" || fail "POST /ops/session with the printed token: $SESSION"
COOKIE=$(sed -n 's/^Set-Cookie: \(enroute_ops=[^;]*\).*/\1/ip' <<<"$SESSION" | tr -d '\r')
[ -n "$COOKIE" ] || fail "the session set no cookie"
curl -s -N --max-time 3 "http://127.0.0.1:$PORT/ops/events" -H "Cookie: $COOKIE" > "$WORK/events.txt" || true
grep -q '^data:.*"providers"' "$WORK/events.txt" || fail "the console's feed sent no overview with the session cookie"
echo "ok: the console's token opens a session and its live feed"
curl -sf "http://127.0.0.1:$PORT/v1/ops/overview" -H "Authorization: Bearer $OPS" > "$WORK/overview.json" || fail "GET /v1/ops/overview"
python3 - "$WORK/overview.json" <<'PY' || fail "the overview does not show a living city"
import json, sys
o = json.load(open(sys.argv[1]))
online, trips = o["counts"].get("providers.online", 0), len(o["trips"])
assert online >= 10 and trips >= 1, f"{online} providers online, {trips} trips under way"
print(f"ok: the overview shows {online} providers online and {trips} trips under way")
PY

# Ctrl-C: SIGINT to the whole group; the script stops the simulator and the server and exits 0.
kill -INT -- "-$GROUP"
stopped=$SECONDS
deadline=$((SECONDS + 60))
while kill -0 "$DEMO" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || fail "the demo was still running 60 s after SIGINT"
  sleep 0.2
done
set +e; wait "$DEMO"; rc=$?; set -e
[ "$rc" -eq 0 ] || fail "the demo exited $rc after SIGINT, not 0"
left=$(pgrep -g "$GROUP" -a || true)
[ -z "$left" ] || fail "processes left in the demo's group: $left"
GROUP=""
! kill -0 "$SERVER" 2>/dev/null || fail "the server (pid $SERVER) is still running"
SERVER=""
grep -q 'stopped cleanly' "$WORK/demo/server.log" || fail "the server did not drain and stop cleanly"
grep -q 'simulate: received signal' "$WORK/err.txt" || fail "the simulator did not stop on the signal"
grep -q 'trips completed' "$WORK/out.txt" || fail "the simulator printed no report"
! curl -s --max-time 2 "http://127.0.0.1:$PORT/healthz" >/dev/null || fail "something still answers on port $PORT"
echo "ok: SIGINT stopped everything in $((SECONDS - stopped)) s, exit 0, no process left; $((SECONDS - started)) s in all"
echo "passed"
