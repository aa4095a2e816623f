#!/usr/bin/env bash
# GET /v1/orders/{id}/tracking with its auth check, over 10,000 stored orders, against nginx serving
# one such snapshot as a static file, in one run (alternating wrk rounds). Prints req/s, p50, p99, ratios, and each
# server's CPU per request (user + system of its process tree over each round, bench/cost.py) with the rounds' spread;
# a ratio over nginx is withheld when nginx's own rounds spread more than MAX_SPREAD per cent (10).
# ENROUTE_BIN runs another build of enroute. PERF=1 then records the server with `perf record -g` during one more round and prints its top symbols
# (reports in bench/out/tracking/).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; DURATION="${DURATION:-10}"; CONNECTIONS="${CONNECTIONS:-64}"; ORDERS="${ORDERS:-10000}"; CUSTOMERS="${CUSTOMERS:-100}"
PERF="${PERF:-0}"
case "$PERF" in 0|1) ;; *) echo "bench/tracking-get.sh: PERF must be 0 or 1, got '$PERF'" >&2; exit 2 ;; esac
NGINX_PORT=18093; SERVER_PORT=18092
groups=(bench); [ "$PERF" = 1 ] && groups+=(profile)
scripts/install-deps.sh "${groups[@]}"
# ENROUTE_BIN: another build to measure (an A/B against an older commit); by default this tree's, built here.
if [ -n "${ENROUTE_BIN:-}" ]; then
  [ -x "$ENROUTE_BIN" ] || { echo "bench/tracking-get.sh: ENROUTE_BIN is not an executable: '$ENROUTE_BIN'" >&2; exit 2; }
  BIN="$ENROUTE_BIN"
else
  swift build -c release --product enroute >/dev/null
  BIN="$(swift build -c release --show-bin-path)/enroute"
fi
WORK=$(mktemp -d); mkdir -p "$WORK/www/v1/orders/SAMPLE" "$WORK/logs"; chmod 755 "$WORK"   # nginx workers read it
SECRET="bench-secret-$(date +%s%N)"
ulimit -n 65536 2>/dev/null || true
# The seeding places 100 orders per customer in seconds; the per-account limits would refuse most.
"$BIN" seed --city helsinki --db "$WORK/bench.sqlite" >/dev/null
"$BIN" serve --port "$SERVER_PORT" --db "$WORK/bench.sqlite" --secret "$SECRET" --rate-limits off > "$WORK/server.log" 2>&1 &
SERVER=$!
cat > "$WORK/nginx.conf" <<NGINX
worker_processes $(nproc);
pid $WORK/nginx.pid;
error_log $WORK/logs/error.log;
events { worker_connections 8192; }
http {
  access_log off;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / { root $WORK/www; default_type application/json; add_header Cache-Control no-store; }
  }
}
NGINX
cleanup() { kill "$SERVER" 2>/dev/null || true; nginx -c "$WORK/nginx.conf" -p "$WORK" -s stop 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$SERVER_PORT/healthz" >/dev/null && break; sleep 0.1; done

echo "seeding $ORDERS orders for $CUSTOMERS customers..."
for c in $(seq 1 "$CUSTOMERS"); do
  printf 'c%s\t%s\n' "$c" "$("$BIN" token --secret "$SECRET" --account "c$c" --role customer)"
done > "$WORK/tokens.tsv"
python3 - "$WORK" "$SERVER_PORT" "$ORDERS" <<'PY'
import http.client, json, sys, uuid
work, port, orders = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tokens = [line.rstrip("\n").split("\t") for line in open(f"{work}/tokens.tsv")]
conn = http.client.HTTPConnection("127.0.0.1", port)
basket = {"merchantId": "m1", "items": [{"sku": "coffee", "quantity": 2}], "destination": {"lat": 60.1841, "lng": 24.9497}}
def post(path, token, payload, headers={}):
    conn.request("POST", path, json.dumps(payload), {"Authorization": f"Bearer {token}", "Content-Type": "application/json", **headers})
    r = conn.getresponse(); return r.status, r.read()
# As the app orders: each customer saves a card once, then every order names its own quote.
for account, token in tokens:
    status, data = post("/v1/payment-methods", token, {"token": "pm_card_visa", "makeDefault": True})
    assert status in (200, 201), (status, data)
with open(f"{work}/requests.txt", "w") as out:
    for i in range(orders):
        account, token = tokens[i % len(tokens)]
        status, data = post("/v1/orders/quote", token, basket)
        assert status == 200, (status, data)
        status, data = post("/v1/orders", token, {**basket, "quoteId": json.loads(data)["quoteId"]}, {"Idempotency-Key": str(uuid.uuid4())})
        assert status == 201, (status, data)
        order = json.loads(data)["orderId"]
        out.write(f"/v1/orders/{order}/tracking\t{token}\n")
        if i == 0:
            open(f"{work}/www/v1/orders/SAMPLE/tracking", "wb").write(data)
PY
cat > "$WORK/nginx.lua" <<LUA
local req
init = function(args)
  local token = io.open("$WORK/tokens.tsv"):read("*l"):match("\t(.+)")
  req = wrk.format("GET", "/v1/orders/SAMPLE/tracking", { ["Authorization"] = "Bearer " .. token })
end
request = function() return req end
LUA
chmod -R a+rX "$WORK/www"
nginx -c "$WORK/nginx.conf" -p "$WORK"
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$NGINX_PORT/v1/orders/SAMPLE/tracking" >/dev/null && break; sleep 0.1; done
REQUESTS="$WORK/requests.txt" wrk -t1 -c"$CONNECTIONS" -d2s -s bench/tracking-requests.lua "http://127.0.0.1:$SERVER_PORT" >/dev/null
wrk -t1 -c"$CONNECTIONS" -d2s -s "$WORK/nginx.lua" "http://127.0.0.1:$NGINX_PORT" >/dev/null
# Each round's server CPU (EnRoute's process; nginx's master and workers) from /proc before and after it; wrk's own
# CPU is the client's and is not counted.
. bench/cost.bash
cost_probe
NGINX_MASTER=$(cat "$WORK/nginx.pid")
for round in $(seq 1 "$ROUNDS"); do
  cost_begin "$WORK/nginx.$round" "$NGINX_MASTER"
  wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$WORK/nginx.lua" "http://127.0.0.1:$NGINX_PORT" > "$WORK/nginx.$round.txt"
  cost_end "$WORK/nginx.$round"
  cost_begin "$WORK/enroute.$round" "$SERVER"
  REQUESTS="$WORK/requests.txt" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s bench/tracking-requests.lua "http://127.0.0.1:$SERVER_PORT" > "$WORK/enroute.$round.txt"
  cost_end "$WORK/enroute.$round"
done
python3 - "$WORK" "$ROUNDS" "$ORDERS" <<'PY'
import sys
sys.path.insert(0, "bench")
from lib import parse_wrk, summarize
import cost
work, rounds, orders = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = {}
for t in ["nginx", "enroute"]:
    runs = [parse_wrk(open(f"{work}/{t}.{r}.txt").read()) for r in range(1, rounds + 1)]
    assert all(r["non2xx"] == 0 for r in runs), f"{t}: non-2xx answers:\n" + open(f"{work}/{t}.1.txt").read()
    rows[t] = summarize(t, runs)
base = rows["nginx"]
print(cost.header("bench/tracking-get.sh"))
print(f"GET /v1/orders/{{id}}/tracking with auth over {orders} orders vs nginx static snapshot; wrk -t1 -c64, {rounds} alternating rounds (medians)")
print(f"{'target':10} {'req/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'rps ratio':>10} {'p99 ratio':>10}   rounds")
for t, r in rows.items():
    print(f"{t:10} {r['rps']:10.0f} {r['p50']:8.2f} {r['p99']:8.2f} {r['rps']/base['rps']:10.2f} {r['p99']/base['p99']:10.2f}   {r['rounds']}")
sides = {}
for t in ["nginx", "enroute"]:
    rounds_of = []
    for r in range(1, rounds + 1):
        wrk, m = parse_wrk(open(f"{work}/{t}.{r}.txt").read()), cost.measure(f"{work}/{t}.{r}")
        rounds_of.append({"ops": wrk["requests"], "cpu": m["cpu"], "instructions": m["instructions"], "rate": wrk["rps"]})
    sides[t] = cost.side(t, rounds_of)
print("\n".join(cost.cost_lines(sides, "nginx", "request", "the server's process tree over each round; wrk not counted",
                                "goal <= 1x: no more CPU than nginx for the same bytes")))
print(cost.result_line("tracking-get", sides["enroute"], sides["nginx"]))
PY
if [ "$PERF" = 1 ]; then
  perf record --call-graph dwarf,16384 -F 499 -p "$SERVER" -o "$WORK/perf.data" -- sleep "$DURATION" > "$WORK/perf.log" 2>&1 &
  PERF_PID=$!
  REQUESTS="$WORK/requests.txt" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" -s bench/tracking-requests.lua "http://127.0.0.1:$SERVER_PORT" >/dev/null
  wait "$PERF_PID" || true
  . bench/perf-report.bash
  perf_report "$WORK/perf.data" bench/out/tracking "the server during one more round"
fi
