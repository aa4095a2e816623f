#!/usr/bin/env bash
# HTTP engine against nginx, in one run: the same 450-byte JSON over keep-alive, wrk alternating
# between the two for several rounds; then 5,000 idle SSE streams and the server's RSS per stream: first members
# of live channels, one per key (how trip and order watchers are served), then streams each fed by a task.
# Prints requests/s, p50 and p99 for each and the ratios (medians of rounds), and each server's CPU per request (its
# process tree over each round, bench/cost.py) with the rounds' spread; a ratio over nginx is withheld when nginx's own
# rounds spread more than MAX_SPREAD per cent (10). ROUNDS=0 measures only the streams.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; DURATION="${DURATION:-10}"; CONNECTIONS="${CONNECTIONS:-64}"; STREAMS="${STREAMS:-5000}"
# ENGINE_THREADS: the engine's event loops (default: the engine's own, one per core but one).
THREADS_ARG=(); [ -n "${ENGINE_THREADS:-}" ] && THREADS_ARG=(--threads "$ENGINE_THREADS")
NGINX_PORT=18090; ENGINE_PORT=18091
scripts/install-deps.sh bench
swift build -c release --product engine-bench >/dev/null
BIN="$(swift build -c release --show-bin-path)/engine-bench"

WORK=$(mktemp -d); mkdir -p "$WORK/www" "$WORK/logs"; chmod 755 "$WORK"   # nginx workers read it
python3 - "$WORK/www/bench.json" <<'PY'
import json, sys
doc = {"orderId": "8F3K2Q9ZP4XW", "version": 7, "status": "onTheWay", "problem": None,
       "eta": {"earliest": "2026-10-20T18:42:00Z", "latest": "2026-10-20T18:46:00Z"},
       "rider": {"firstName": "Ana", "lat": 52.520008, "lng": 13.404954, "recordedAt": "2026-10-20T18:37:55Z"},
       "destination": {"lat": 52.530011, "lng": 13.410122}, "generatedAt": "2026-10-20T18:38:00Z",
       "pad": ""}
text = json.dumps(doc, separators=(",", ":"))
doc["pad"] = "x" * (450 - len(text))
open(sys.argv[1], "w").write(json.dumps(doc, separators=(",", ":")))
PY
cat > "$WORK/nginx.conf" <<NGINX
worker_processes $(nproc);
pid $WORK/nginx.pid;
error_log $WORK/logs/error.log;
events { worker_connections 8192; }
http {
  access_log off;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location = /bench.json { root $WORK/www; default_type application/json; add_header Cache-Control no-store; }
  }
}
NGINX
ulimit -n 65536 2>/dev/null || true
chmod -R a+rX "$WORK/www"
nginx -c "$WORK/nginx.conf" -p "$WORK"
"$BIN" --port "$ENGINE_PORT" --body "$WORK/www/bench.json" "${THREADS_ARG[@]}" > "$WORK/engine.log" 2>&1 &
ENGINE=$!
cleanup() { kill "$ENGINE" 2>/dev/null || true; nginx -c "$WORK/nginx.conf" -p "$WORK" -s stop 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$ENGINE_PORT/bench.json" >/dev/null && curl -sf "http://127.0.0.1:$NGINX_PORT/bench.json" >/dev/null && break; sleep 0.1; done
cmp <(curl -s "http://127.0.0.1:$ENGINE_PORT/bench.json") <(curl -s "http://127.0.0.1:$NGINX_PORT/bench.json") || { echo "bodies differ" >&2; exit 1; }

if [ "$ROUNDS" -gt 0 ]; then   # ROUNDS=0: only the idle streams
declare -A URL=([nginx]="http://127.0.0.1:$NGINX_PORT/bench.json" [engine-async]="http://127.0.0.1:$ENGINE_PORT/bench.json" [engine-sync]="http://127.0.0.1:$ENGINE_PORT/bench-sync.json" [engine-wait]="http://127.0.0.1:$ENGINE_PORT/bench-wait.json")
for t in nginx engine-async engine-sync engine-wait; do wrk -t1 -c"$CONNECTIONS" -d2s "${URL[$t]}" >/dev/null; done
# Each round's server CPU (the engine's process; nginx's master and workers) from /proc before and after it; wrk's own
# CPU is the client's and is not counted.
. bench/cost.bash
cost_probe
declare -A ROOT=([nginx]="$(cat "$WORK/nginx.pid")" [engine-async]="$ENGINE" [engine-sync]="$ENGINE" [engine-wait]="$ENGINE")
for round in $(seq 1 "$ROUNDS"); do
  for t in nginx engine-async engine-sync engine-wait; do
    cost_begin "$WORK/$t.$round" "${ROOT[$t]}"
    wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "${URL[$t]}" > "$WORK/$t.$round.txt"
    cost_end "$WORK/$t.$round"
  done
done

python3 - "$WORK" "$ROUNDS" <<'PY'
import sys
sys.path.insert(0, "bench")
from lib import parse_wrk, summarize
import cost
work, rounds = sys.argv[1], int(sys.argv[2])
rows = {t: summarize(t, [parse_wrk(open(f"{work}/{t}.{r}.txt").read()) for r in range(1, rounds + 1)])
        for t in ["nginx", "engine-async", "engine-sync", "engine-wait"]}
for t in rows:
    bad = [parse_wrk(open(f"{work}/{t}.{r}.txt").read()) for r in range(1, rounds + 1)]
    assert all(b["non2xx"] == 0 for b in bad), f"{t}: non-2xx answers"
base = rows["nginx"]
print(cost.header("bench/http-engine.sh"))
print(f"GET 450-byte JSON, keep-alive, wrk -t1 -c64, {rounds} alternating rounds (medians)")
print(f"{'target':14} {'req/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'rps ratio':>10} {'p99 ratio':>10}   rounds")
for t, r in rows.items():
    print(f"{t:14} {r['rps']:10.0f} {r['p50']:8.2f} {r['p99']:8.2f} {r['rps']/base['rps']:10.2f} {r['p99']/base['p99']:10.2f}   {r['rounds']}")
sides = {}
for t in rows:
    rounds_of = []
    for r in range(1, rounds + 1):
        wrk, m = parse_wrk(open(f"{work}/{t}.{r}.txt").read()), cost.measure(f"{work}/{t}.{r}")
        rounds_of.append({"ops": wrk["requests"], "cpu": m["cpu"], "instructions": m["instructions"], "rate": wrk["rps"]})
    sides[t] = cost.side(t, rounds_of)
print("\n".join(cost.cost_lines(sides, "nginx", "request", "the server's process tree over each round; wrk not counted")))
for t in ["engine-async", "engine-sync", "engine-wait"]:
    print(cost.result_line("http-engine", sides[t], sides["nginx"]))
PY
fi

# Idle streams, each kind on a fresh server (glibc keeps freed heap, so a second kind would reuse the first's).
echo
for kind in live events; do
  kill "$ENGINE" 2>/dev/null || true; wait "$ENGINE" 2>/dev/null || true
  "$BIN" --port "$ENGINE_PORT" --body "$WORK/www/bench.json" "${THREADS_ARG[@]}" > "$WORK/engine.$kind.log" 2>&1 &
  ENGINE=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$ENGINE_PORT/bench.json" >/dev/null && break; sleep 0.1; done
  python3 - "$ENGINE" "$ENGINE_PORT" "$STREAMS" "$kind" <<'PY'
import asyncio, sys
sys.path.insert(0, "bench")
from lib import hold_sse, rss_kib
pid, port, streams, kind = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
path, what = {"live": ("/live/{i}", "members of a live channel each (trip watchers)"),
              "events": ("/events", "each fed by a task")}[kind]
async def sse():
    before = rss_kib(pid)
    held = await hold_sse(port, path, streams)
    await asyncio.sleep(1)
    after = rss_kib(pid)
    print(f"{streams} idle SSE streams, {what}: RSS {before/1024:.1f} MiB -> {after/1024:.1f} MiB, "
          f"{(after - before) * 1024 / streams / 1000:.1f} KB per stream")
    for r, w in held:
        w.close()
asyncio.run(sse())
PY
done
