#!/usr/bin/env bash
# Fan-out: WATCHERS SSE watchers on one stream, one event published at a time; the time from
# publishing each event to each watcher reading it. Three servers in one run, the same client:
#   floor   - `server-bench fanout-floor`: the event framed once and send() to every socket, nothing else
#   nchan   - nginx with the nchan pub/sub module (the peer), 2 workers
#   enroute - `enroute serve`: a ride's /events watchers, the provider posting one fix per batch
# Prints p50/p99 per delivery and p99 of the last watcher for each, the ratios of enroute to the
# floor and to nchan, and to the goal (p99 <= 10 ms). The client shares the machine's cores with
# the server under test. Loops are bounded by FIXES and SECONDS_LIMIT.
set -euo pipefail
cd "$(dirname "$0")/.."
WATCHERS="${WATCHERS:-10000}"; FIXES="${FIXES:-50}"; SECONDS_LIMIT="${SECONDS_LIMIT:-180}"
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
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
wait_port() { for _ in $(seq 1 100); do (echo > "/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }
client() { "$BIN/server-bench" fanout --watchers "$WATCHERS" --fixes "$FIXES" --seconds "$SECONDS_LIMIT" "$@" | tee -a "$WORK/results"; }

# The floor.
"$BIN/server-bench" fanout-floor --port "$FLOOR_PORT" --threads "$(nproc)" > "$WORK/floor.log" 2>&1 &
PIDS+=($!); wait_port "$FLOOR_PORT"
client --target raw --port "$FLOOR_PORT"
kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true

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
client --target nchan --port "$NCHAN_PORT"
kill "$(cat "$WORK/nginx.pid")"; rm -f "$WORK/nginx.pid"

# EnRoute.
# One provider posts a batch every few milliseconds, past the per-account location limit when FIXES is large.
"$BIN/enroute" serve --port "$PORT" --db "$WORK/fanout.sqlite" --max-connections $((WATCHERS + 1000)) --idle-timeout 600 --rate-limits off > "$WORK/server.log" 2>&1 &
PIDS+=($!); wait_port "$PORT"
CUSTOMER=$("$BIN/enroute" token --db "$WORK/fanout.sqlite" --account c-fanout --role customer)
PROVIDER=$("$BIN/enroute" token --db "$WORK/fanout.sqlite" --account p-fanout --role provider)
OPS=$("$BIN/enroute" token --db "$WORK/fanout.sqlite" --account ops-fanout --role ops)
client --target enroute --port "$PORT" --customer-token "$CUSTOMER" --provider-token "$PROVIDER" --provider-account p-fanout --ops-token "$OPS"

python3 - "$WORK/results" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    if line.startswith("RESULT "):
        _, target, p50, p99, last99, missed = line.split()
        rows[target] = (float(p50), float(p99), float(last99), int(missed))
print()
print(f"{'server':<8} {'p50 ms':>8} {'p99 ms':>8} {'last-watcher p99 ms':>20} {'missed':>7}")
for name in ("raw", "nchan", "enroute"):
    if name in rows:
        p50, p99, last99, missed = rows[name]
        print(f"{'floor' if name == 'raw' else name:<8} {p50:>8.2f} {p99:>8.2f} {last99:>20.2f} {missed:>7}")
e = rows["enroute"]
print(f"ratio enroute/floor p99: {e[1] / rows['raw'][1]:.2f}   (1.00 = nothing but the system calls)")
print(f"ratio enroute/nchan p99: {e[1] / rows['nchan'][1]:.2f}   (< 1 is faster than the peer)")
print(f"ratio enroute p99 / goal 10 ms: {e[1] / 10:.2f}   (floor: {rows['raw'][1] / 10:.2f}; <= 1 meets the goal)")
PY
