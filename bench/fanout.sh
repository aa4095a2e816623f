#!/usr/bin/env bash
# Fan-out: WATCHERS SSE watchers on one stream, one event published at a time; the time from
# publishing each event to each watcher reading it. Three servers in one run, the same client:
#   floor   - `server-bench fanout-floor`: the event framed once and send() to every socket, nothing else
#   nchan   - nginx with the nchan pub/sub module (the peer), 2 workers
#   enroute - `enroute serve`: a ride's /events watchers, the provider posting one fix per batch
# Prints p50/p99 per delivery and p99 of the last watcher for each, the ratios of enroute to the
# floor and to nchan, and to the goal (p99 <= 10 ms). The client shares the machine's cores with
# the server under test. Loops are bounded by FIXES and SECONDS_LIMIT.
# Cost per delivery: each server's CPU (user + system of every process it runs, from /proc) over the counted events,
# per event per watcher, against the floor's (goal: <= 1.1x) and nchan's. The three servers run side by side and
# ROUNDS (3) rounds alternate between them; a ratio over a reference whose rounds spread more than MAX_SPREAD per cent
# (10) is withheld.
set -euo pipefail
cd "$(dirname "$0")/.."
WATCHERS="${WATCHERS:-10000}"; FIXES="${FIXES:-50}"; ROUNDS="${ROUNDS:-3}"; SECONDS_LIMIT="${SECONDS_LIMIT:-180}"
PORT="${PORT:-18211}"; NCHAN_PORT=$((PORT + 1)); FLOOR_PORT=$((PORT + 2))
SCRATCH="${SCRATCH:-.build}"
scripts/install-deps.sh bench
swift build -c release --scratch-path "$SCRATCH" --product server-bench >/dev/null
swift build -c release --scratch-path "$SCRATCH" --product enroute >/dev/null
BIN="$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)"
WORK=$(mktemp -d); mkdir -p "$WORK/logs"; chmod 755 "$WORK"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
PIDS=()
cleanup() {
  # A server still busy after 10 s of SIGTERM is killed (the summary is printed by then).
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { echo "fanout.sh: pid $pid ignored SIGTERM for 10 s; killed" >&2; kill -KILL "$pid"; }
    wait "$pid" 2>/dev/null || true
  done
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
wait_port() { for _ in $(seq 1 100); do (echo > "/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }
client() { "$BIN/server-bench" fanout --watchers "$WATCHERS" --fixes "$FIXES" --seconds "$SECONDS_LIMIT" "$@" | tee -a "$WORK/results"; }
. bench/cost.bash
cost_probe   # instructions: the client times the counted events inside its run, so perf stat is not attached

# The floor.
"$BIN/server-bench" fanout-floor --port "$FLOOR_PORT" --threads "$(nproc)" > "$WORK/floor.log" 2>&1 &
FLOOR=$!; PIDS+=($FLOOR); wait_port "$FLOOR_PORT"

# The peer: nginx + nchan.
cat > "$WORK/nginx.conf" <<NGINX
load_module /usr/lib/nginx/modules/ngx_nchan_module.so;
worker_processes $(nproc);
worker_rlimit_nofile $((WATCHERS * 2 + 1000));
pid $WORK/nginx.pid;
error_log $WORK/logs/error.log;
events { worker_connections $((WATCHERS + 1000)); }
http {
  access_log off;
  server {
    listen 127.0.0.1:$NCHAN_PORT;
    location = /sub { nchan_subscriber eventsource; nchan_channel_id fanout; }
    location = /pub { nchan_publisher; nchan_channel_id fanout; nchan_message_buffer_length 8; }
  }
}
NGINX
nginx -c "$WORK/nginx.conf" -p "$WORK" -e "$WORK/logs/error.log"
wait_port "$NCHAN_PORT"
NCHAN_PIDS=$(python3 bench/cost.py pids "$(cat "$WORK/nginx.pid")")   # the master and its workers

# EnRoute.
# One provider posts a batch every few milliseconds, past the per-account location limit when FIXES is large.
"$BIN/enroute" serve --port "$PORT" --db "$WORK/fanout.sqlite" --max-connections $((WATCHERS + 1000)) --idle-timeout 600 --rate-limits off > "$WORK/server.log" 2>&1 &
ENROUTE=$!; PIDS+=($ENROUTE); wait_port "$PORT"
OPS=$("$BIN/enroute" token --db "$WORK/fanout.sqlite" --account ops-fanout --role ops)

# Rounds alternate between the three, each server measured by the client over its counted events (--cpu-pids).
for round in $(seq 1 "$ROUNDS"); do
  echo "== round $round of $ROUNDS"
  client --target raw --port "$FLOOR_PORT" --cpu-pids "$FLOOR"
  client --target nchan --port "$NCHAN_PORT" --cpu-pids "$NCHAN_PIDS"
  # The channel keeps its last events: gone, so the next round's watchers start on an empty one, as this round's did.
  curl -sf -X DELETE "http://127.0.0.1:$NCHAN_PORT/pub" >/dev/null || true
  # A ride of its own each round: a customer has one unfinished ride at a time.
  CUSTOMER=$("$BIN/enroute" token --db "$WORK/fanout.sqlite" --account "c-fanout-$round" --role customer)
  PROVIDER=$("$BIN/enroute" token --db "$WORK/fanout.sqlite" --account "p-fanout-$round" --role provider)
  client --target enroute --port "$PORT" --cpu-pids "$ENROUTE" --customer-token "$CUSTOMER" --provider-token "$PROVIDER" \
    --provider-account "p-fanout-$round" --ops-token "$OPS"
done

python3 - "$WORK/results" "$WATCHERS" <<'PY'
import statistics, sys
sys.path.insert(0, "bench")
import cost
rounds = {}
for line in open(sys.argv[1]):
    if line.startswith("RESULT "):
        # target p50 p99 last-watcher-p99 missed server-CPU-s deliveries
        f = line.split()
        rounds.setdefault(f[1], []).append((float(f[2]), float(f[3]), float(f[4]), int(f[5]), float(f[6]), int(f[7])))
rows = {t: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs), statistics.median(r[2] for r in rs),
            sum(r[3] for r in rs)) for t, rs in rounds.items()}
names = {"raw": "floor", "nchan": "nchan", "enroute": "enroute"}
print()
print(cost.header("bench/fanout.sh"))
print(f"fan-out to {sys.argv[2]} SSE watchers, medians of {len(rounds['raw'])} alternating rounds")
print(f"{'server':<8} {'p50 ms':>8} {'p99 ms':>8} {'last-watcher p99 ms':>20} {'missed':>7}   p99 per round")
for name in ("raw", "nchan", "enroute"):
    if name in rows:
        p50, p99, last99, missed = rows[name]
        print(f"{names[name]:<8} {p50:>8.2f} {p99:>8.2f} {last99:>20.2f} {missed:>7}   "
              f"[{', '.join(f'{r[1]:.2f}' for r in rounds[name])}]")
e = rows["enroute"]
print(f"ratio enroute/floor p99: {e[1] / rows['raw'][1]:.2f}   (1.00 = nothing but the system calls)")
print(f"ratio enroute/nchan p99: {e[1] / rows['nchan'][1]:.2f}   (< 1 is faster than the peer)")
print(f"ratio enroute p99 / goal 10 ms: {e[1] / 10:.2f}   (floor: {rows['raw'][1] / 10:.2f}; <= 1 meets the goal)")
sides = {t: cost.side(names[t], [{"ops": r[5], "cpu": r[4], "instructions": None, "rate": None} for r in rs])
         for t, rs in rounds.items()}
print("\n".join(cost.cost_lines(sides, "raw", "delivery", "each server's processes over the counted events, per event "
                                "per watcher; the client not counted", "goal <= 1.1x the floor")))
print("  " + cost.ratio_text("CPU per delivery ratio enroute / nchan", sides["enroute"]["us_med"], sides["nchan"]["us_med"],
                             "nchan", sides["nchan"]["us"]))
if cost.instructions_supported():
    print("  instructions: not counted per delivery (the client times the counted events inside its run)")
print(cost.result_line("fanout", sides["enroute"], sides["raw"]))
print(cost.result_line("fanout-nchan", sides["enroute"], sides["nchan"]))
PY
