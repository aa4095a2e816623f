#!/usr/bin/env bash
# EnRoute as a cluster on this one machine, in one run:
#   1. order creates/s (a quote, then POST /v1/orders with an Idempotency-Key, as the app places one) and tracking
#      GETs/s (GET /v1/orders/{id}/tracking over the orders just created, wrk) on one node on SQLite (the reference,
#      no proxy), then on 1, 2 and 3 nodes on PostgreSQL + Redis behind nginx (scripts/cluster.sh); the single
#      PostgreSQL node is also read directly, without nginx;
#   2. fan-out at WATCHERS SSE watchers: a fix accepted by node A and read by watchers on node B (through Redis),
#      against watchers on node A itself (rounds alternating), and against one node on SQLite; medians of FANOUT_ROUNDS;
#   3. location ingest with the path persisted into PostgreSQL (server-bench ingest --store) against one COPY of the
#      same rows.
# Every cluster starts on an empty database. All of it shares this machine's cores (nodes, PostgreSQL, Redis, nginx
# and the clients): the per-core figures are the rate over nproc and the rate per core the server side (nodes,
# PostgreSQL, Redis, nginx) used, and where the CPU went is printed per phase ("other": what ran beside the benchmark).
# Cost per op: the server side's CPU seconds (bench/cost.py's process trees) per order placed (its quote included: the
# creates client quotes, then confirms) and per tracking GET, against the SQLite node's; one run per setup, so the
# ratios say their reference's spread is not measured.
# Knobs: DURATION (seconds per phase, 8), NODE_COUNTS ("1 2 3"), CUSTOMERS (200), CREATE_CONNECTIONS (32),
# CONNECTIONS (wrk's, 64), WATCHERS (1000), FIXES (50), FANOUT_ROUNDS (3), INGEST_PROVIDERS (200), INGEST_BATCHES (50),
# BASE_PORT (18400). About 5 minutes with the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${DURATION:-8}"; NODE_COUNTS="${NODE_COUNTS:-1 2 3}"; CUSTOMERS="${CUSTOMERS:-200}"
CREATE_CONNECTIONS="${CREATE_CONNECTIONS:-32}"; CONNECTIONS="${CONNECTIONS:-64}"; WATCHERS="${WATCHERS:-1000}"; FIXES="${FIXES:-50}"; FANOUT_ROUNDS="${FANOUT_ROUNDS:-3}"
INGEST_PROVIDERS="${INGEST_PROVIDERS:-200}"; INGEST_BATCHES="${INGEST_BATCHES:-50}"; BASE_PORT="${BASE_PORT:-18400}"
for v in DURATION CUSTOMERS CREATE_CONNECTIONS CONNECTIONS WATCHERS FIXES FANOUT_ROUNDS INGEST_PROVIDERS INGEST_BATCHES BASE_PORT; do
  case "${!v}" in ''|*[!0-9]*|0) echo "bench/cluster.sh: $v must be a positive number, got '${!v}'" >&2; exit 2 ;; esac
done
for n in $NODE_COUNTS; do case "$n" in [1-9]) ;; *) echo "bench/cluster.sh: NODE_COUNTS holds 1..9, got '$n'" >&2; exit 2 ;; esac; done
[ "$BASE_PORT" -le 32700 ] || { echo "bench/cluster.sh: BASE_PORT must be at most 32700" >&2; exit 2; }
NGINX_PORT=$BASE_PORT; NODE_PORT=$((BASE_PORT + 1)); REF_PORT=$((BASE_PORT + 30)); PG_PORT=$((BASE_PORT + 40)); REDIS_PORT=$((BASE_PORT + 41))

scripts/install-deps.sh bench cluster
swift build -c release --product enroute >/dev/null
swift build -c release --product server-bench >/dev/null
BIN="$(swift build -c release --show-bin-path)"
WORK=$(mktemp -d /tmp/enroute-bench-cluster.XXXXXX); chmod 755 "$WORK"
PG_DIR="$WORK/pg"   # under /tmp: under root the postgres user must reach it
SECRET="bench-cluster-$(date +%s%N)"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
CLUSTER="" REF=""
stop_cluster() {
  [ -n "$CLUSTER" ] || return 0
  kill -TERM "$CLUSTER" 2>/dev/null || true; wait "$CLUSTER" 2>/dev/null || true; CLUSTER=""
}
stop_ref() { [ -n "$REF" ] || return 0; kill -TERM "$REF" 2>/dev/null || true; wait "$REF" 2>/dev/null || true; REF=""; }
cleanup() {
  set +e
  stop_cluster; stop_ref
  scripts/redis.sh stop "$WORK/redis"
  scripts/postgres.sh stop "$PG_DIR"
  rm -rf "$WORK"
}
trap cleanup EXIT

PG_URL=$(scripts/postgres.sh reset "$PG_DIR" "$PG_PORT")
REDIS_URL=$(scripts/redis.sh start "$WORK/redis" "$REDIS_PORT")
PG_ADMIN="postgres://enroute@127.0.0.1:$PG_PORT/postgres"
POSTMASTER=$(head -1 "$PG_DIR/data/postmaster.pid")
REDIS_PID=$(cat "$WORK/redis/redis.pid")
fresh_store() {
  psql "$PG_ADMIN" -qAt -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS enroute WITH (FORCE)" -c "CREATE DATABASE enroute OWNER enroute" >/dev/null
  redis-cli -p "$REDIS_PORT" flushall >/dev/null
}
wait_port() { for _ in $(seq 1 200); do (echo > "/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }
SERVE_ARGS=(--rate-limits off --idle-timeout 600 --max-connections 20000)

# Starts N nodes on an empty database behind nginx; their pids and ports come from cluster.env.
start_cluster() {
  local n=$1
  fresh_store
  rm -rf "$WORK/cluster"
  scripts/cluster.sh --nodes "$n" --port "$NGINX_PORT" --node-port "$NODE_PORT" --dir "$WORK/cluster" \
    --postgres-url "$PG_URL" --redis-url "$REDIS_URL" --secret "$SECRET" --bin "$BIN/enroute" -- "${SERVE_ARGS[@]}" \
    > "$WORK/cluster-$n.log" 2>&1 &
  CLUSTER=$!
  for _ in $(seq 1 600); do
    [ -f "$WORK/cluster/cluster.env" ] && break
    kill -0 "$CLUSTER" 2>/dev/null || { echo "cluster of $n did not start:" >&2; tail -30 "$WORK/cluster-$n.log" >&2; exit 1; }
    sleep 0.1
  done
  [ -f "$WORK/cluster/cluster.env" ] || { echo "cluster of $n did not come up in 60 s" >&2; tail -30 "$WORK/cluster-$n.log" >&2; exit 1; }
  # shellcheck disable=SC1091
  . "$WORK/cluster/cluster.env"
  NODE_PIDS=${CLUSTER_NODE_PIDS// /,}
  GROUPS_NOW=(nodes="$NODE_PIDS" postgres="$POSTMASTER" redis="$REDIS_PID" nginx="$CLUSTER_NGINX_PID")
}

# creates then GETs against PORT, labelled LABEL; results in $WORK/results.
measure() {
  local label=$1 port=$2
  echo "== $label: creates (quotes then orders, $CREATE_CONNECTIONS connections, ${DURATION} s each)"
  python3 bench/cpu_of.py "$WORK/$label.creates.cpu" "${GROUPS_NOW[@]}" -- \
    "$BIN/server-bench" creates --port "$port" --secret "$SECRET" --customers "$CUSTOMERS" --connections "$CREATE_CONNECTIONS" \
      --seconds "$DURATION" --out "$WORK/$label.orders" --tag "$label" | tee "$WORK/$label.creates.txt"
  get "$label" "$port" "$WORK/$label.orders"
}

# wrk over the tracking paths in ORDERS (one per order), against PORT.
get() {
  local label=$1 port=$2 orders=$3
  echo "== $label: tracking GETs over $(wc -l < "$orders") orders (wrk -t1 -c$CONNECTIONS, ${DURATION} s)"
  REQUESTS="$orders" wrk -t1 -c"$CONNECTIONS" -d2s -s bench/tracking-requests.lua "http://127.0.0.1:$port" >/dev/null
  python3 bench/cpu_of.py "$WORK/$label.get.cpu" "${GROUPS_NOW[@]}" -- \
    env REQUESTS="$orders" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s bench/tracking-requests.lua "http://127.0.0.1:$port" > "$WORK/$label.get.txt"
  grep -E 'Requests/sec|Non-2xx|Socket errors' "$WORK/$label.get.txt" || true
}

# One fan-out round: a ride of its own (customer and provider named after LABEL and ROUND), fixes to PORT, watchers on WATCH.
fanout() {
  local label=$1 round=$2 port=$3 watch=$4
  local c p o
  c=$("$BIN/enroute" token --secret "$SECRET" --account "c-$label-$round" --role customer)
  p=$("$BIN/enroute" token --secret "$SECRET" --account "p-$label-$round" --role provider)
  o=$("$BIN/enroute" token --secret "$SECRET" --account "ops-$label" --role ops)
  echo "== fan-out $label, round $round: $WATCHERS watchers on port $watch, fixes posted to port $port"
  "$BIN/server-bench" fanout --target enroute --label "$label" --port "$port" --watch-port "$watch" --watchers "$WATCHERS" --fixes "$FIXES" \
    --seconds 120 --customer-token "$c" --provider-token "$p" --provider-account "p-$label-$round" --ops-token "$o" | tee -a "$WORK/fanout.txt"
}

# 1. The reference: one node on SQLite, no proxy.
"$BIN/enroute" seed --city helsinki --db "$WORK/ref.sqlite" >/dev/null
"$BIN/enroute" serve --port "$REF_PORT" --db "$WORK/ref.sqlite" --secret "$SECRET" "${SERVE_ARGS[@]}" > "$WORK/ref.log" 2>&1 &
REF=$!
wait_port "$REF_PORT"
GROUPS_NOW=(nodes="$REF")
measure sqlite "$REF_PORT"
for r in $(seq 1 "$FANOUT_ROUNDS"); do fanout sqlite "$r" "$REF_PORT" "$REF_PORT"; done
stop_ref

# 1. The clusters.
for n in $NODE_COUNTS; do
  start_cluster "$n"
  measure "pg$n" "$NGINX_PORT"
  if [ "$n" = 1 ]; then get pg1-direct "$NODE_PORT" "$WORK/pg1.orders"; fi
  stop_cluster
done

# 2. Fan-out across nodes, on a fresh two-node cluster: rounds alternate, so a passing load touches both alike.
start_cluster 2
for r in $(seq 1 "$FANOUT_ROUNDS"); do
  fanout same-node "$r" "$NODE_PORT" "$NODE_PORT"
  fanout cross-node "$r" "$NODE_PORT" $((NODE_PORT + 1))
done
stop_cluster

# 3. Ingest into PostgreSQL against COPY, on an empty database.
fresh_store
echo "== ingest into PostgreSQL"
"$BIN/server-bench" ingest --store "$PG_URL" --providers "$INGEST_PROVIDERS" --batches "$INGEST_BATCHES" --batch 50 --concurrency 32 \
  --seconds 60 --dir "$WORK" | tee "$WORK/ingest.txt"

python3 - "$WORK" "$NODE_COUNTS" "$(nproc)" "$WATCHERS" <<'PY'
import json, os, sys
sys.path.insert(0, "bench")
from lib import parse_wrk
import cost
work, counts, cores, watchers = sys.argv[1], sys.argv[2].split(), int(sys.argv[3]), sys.argv[4]

def result(path, name):
    for line in open(path):
        if line.startswith("RESULT " + name + " "):
            return line.split()[2:]
    raise SystemExit(f"no RESULT {name} in {path}")

def cpu(path):
    c = json.load(open(path))["cores"]
    order = ["nodes", "postgres", "redis", "nginx", "client", "other"]
    return " ".join(f"{k} {c[k]:.2f}" for k in order if k in c)

def server_cores(path):
    c = json.load(open(path))["cores"]
    return sum(c.get(k, 0) for k in ("nodes", "postgres", "redis", "nginx"))

rows, used = [], {}
labels = ["sqlite"] + [f"pg{n}" for n in counts]
for label in labels:
    rate, p50, p99, failed = result(f"{work}/{label}.creates.txt", "creates")
    get = parse_wrk(open(f"{work}/{label}.get.txt").read())
    assert get["non2xx"] == 0, f"{label}: non-2xx tracking answers"
    rows.append((label, float(rate), float(p99), get["rps"], get["p99"], cpu(f"{work}/{label}.creates.cpu"), cpu(f"{work}/{label}.get.cpu")))
    used[label] = (server_cores(f"{work}/{label}.creates.cpu"), server_cores(f"{work}/{label}.get.cpu"))
if os.path.exists(f"{work}/pg1-direct.get.txt"):
    direct = parse_wrk(open(f"{work}/pg1-direct.get.txt").read())
    direct_cpu = cpu(f"{work}/pg1-direct.get.cpu")
else:
    direct = None

print(cost.header("bench/cluster.sh"))
names = {"sqlite": "1 node, SQLite, direct (reference)"}
names.update({f"pg{n}": f"{n} node{'s' if n != '1' else ''}, PostgreSQL + Redis, nginx" for n in counts})
print()
print(f"{'setup':40} {'creates/s':>10} {'create p99':>11} {'GETs/s':>9} {'GET p99':>9}")
for label, c, cp99, g, gp99, _, _ in rows:
    print(f"{names[label]:40} {c:10.0f} {cp99:9.1f}ms {g:9.0f} {gp99:7.2f}ms")
if direct:
    print(f"{'1 node, PostgreSQL + Redis, direct':40} {'':>10} {'':>11} {direct['rps']:9.0f} {direct['p99']:7.2f}ms")
print()
print("where the cores went (cores busy; 'other' is outside this benchmark):")
for label, *_, ccpu, gcpu in rows:
    print(f"  {label:7} creates: {ccpu}")
    print(f"  {'':7} GETs:    {gcpu}")
if direct:
    print(f"  pg1-direct GETs: {direct_cpu}")
by = {r[0]: r for r in rows}
ref = by["sqlite"]
print()
for label in labels:
    r = by[label]
    cu, gu = used[label]
    print(f"{label}: creates {r[1] / ref[1]:.2f}x the SQLite node, GETs {r[3] / ref[3]:.2f}x; per core of the machine ({cores}): "
          f"{r[1] / cores:.0f} creates/s, {r[3] / cores:.0f} GETs/s; per core the server side used ({cu:.2f} and {gu:.2f}): "
          f"{r[1] / cu:.0f} creates/s, {r[3] / gu:.0f} GETs/s")
first, last = f"pg{counts[0]}", f"pg{counts[-1]}"
if first != last:
    print(f"ratio {counts[-1]} nodes : {counts[0]} node: creates {by[last][1] / by[first][1]:.2f}, GETs {by[last][3] / by[first][3]:.2f}"
          f"   (all on the same {cores} cores)")
if direct:
    print(f"nginx's share: 1 PostgreSQL node read through nginx {by['pg1'][3] / direct['rps']:.2f}x directly")

def server_seconds(path):
    c = json.load(open(path))["cpu"]
    return sum(c.get(k, 0) for k in ("nodes", "postgres", "redis", "nginx"))
costs = {}
for label in labels:
    placed = sum(1 for _ in open(f"{work}/{label}.orders"))
    gets = parse_wrk(open(f"{work}/{label}.get.txt").read())
    costs[label] = (
        cost.side(label, [{"ops": placed, "cpu": server_seconds(f"{work}/{label}.creates.cpu"), "rate": by[label][1]}]),
        cost.side(label, [{"ops": gets["requests"], "cpu": server_seconds(f"{work}/{label}.get.cpu"), "rate": gets["rps"]}]))
print()
print("cost per op (the server side's CPU: nodes, PostgreSQL, Redis, nginx, user + system; the clients not counted):")
for label in labels:
    c, g = costs[label]
    vs = "" if label == "sqlite" else (f"   ({c['us_med'] / costs['sqlite'][0]['us_med']:.2f}x and "
                                       f"{g['us_med'] / costs['sqlite'][1]['us_med']:.2f}x the SQLite node's; 1 run each, "
                                       "spread not measured)")
    print(f"  {label:7} {c['us_med']:9.1f} µs per order placed (quote + create), {g['us_med']:7.1f} µs per tracking GET{vs}")
if direct:
    d = cost.side("pg1-direct", [{"ops": direct["requests"], "cpu": server_seconds(f"{work}/pg1-direct.get.cpu"),
                                  "rate": direct["rps"]}])
    print(f"  pg1-direct: {d['us_med']:.1f} µs per tracking GET (1 PostgreSQL node without nginx)")
note = cost.instructions_note()
if note:
    print("  " + note)
else:
    print("  instructions: not counted (cpu_of.py times each phase from /proc only)")
for label in labels[1:]:
    print(cost.result_line("cluster-create", {**costs[label][0], "name": label}, costs["sqlite"][0]))
    print(cost.result_line("cluster-get", {**costs[label][1], "name": label}, costs["sqlite"][1]))

import statistics
rounds = {}
for line in open(f"{work}/fanout.txt"):
    if line.startswith("RESULT "):
        _, label, p50, p99, last99, missed = line.split()[:6]
        rounds.setdefault(label, []).append((float(p50), float(p99), float(last99), int(missed)))
fan = {label: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs), statistics.median(r[2] for r in rs),
               sum(r[3] for r in rs)) for label, rs in rounds.items()}
print()
print(f"fan-out at {watchers} SSE watchers, a fix accepted -> each watcher reads it (medians of {len(rounds.get('cross-node', []))} rounds):")
for label in ("sqlite", "same-node", "cross-node"):
    if label in fan:
        p50, p99, last99, missed = fan[label]
        print(f"  {label:11} p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  last watcher p99 {last99:7.2f} ms  missed {missed}"
              f"   (p99 of each round: {', '.join(f'{r[1]:.1f}' for r in rounds[label])})")
if "cross-node" in fan and "same-node" in fan:
    print(f"ratio cross-node / same-node p99: {fan['cross-node'][1] / fan['same-node'][1]:.2f}"
          + (f"; cross-node / SQLite node: {fan['cross-node'][1] / fan['sqlite'][1]:.2f}" if "sqlite" in fan else ""))

rate, copy, w50, w99 = (float(x) for x in result(f"{work}/ingest.txt", "ingest-postgres"))
print()
print(f"ingest into PostgreSQL: {rate:.0f} fixes/s, COPY of the same rows {copy:.0f} rows/s: ratio {rate / copy:.2f}x;"
      f" a trip write meanwhile p50 {w50:.1f} ms, p99 {w99:.1f} ms")
PY
