#!/usr/bin/env bash
# `make cluster`: EnRoute as several nodes on one machine. Starts a scratch PostgreSQL (scripts/postgres.sh) and Redis
# (scripts/redis.sh) under the cluster's folder, seeds the demo directory, starts NODES `enroute serve` processes on
# that store and bus (distinct --node names, one --secret), and nginx in front of them, set up for SSE and WebSocket.
# Prints the address and how to get a token, then runs until Ctrl-C (SIGINT or SIGTERM), which stops the nodes (they
# drain), nginx, and the PostgreSQL and Redis it started. If a node or nginx dies on its own, it says so, stops the
# rest and exits 1.
#
# Usage: scripts/cluster.sh [options] [-- extra `enroute serve` options for every node]
#   --nodes N           nodes, 1..16 (CLUSTER_NODES, default 3)
#   --port P            nginx's port, where clients connect (CLUSTER_PORT, default 8090)
#   --node-port P       the first node's port; node i listens on P+i-1 (CLUSTER_NODE_PORT, default 18301)
#   --dir DIR           the scratch folder: logs, nginx's files, the secret, proof uploads (CLUSTER_DIR, default .cluster)
#   --pg-port P         the local PostgreSQL's port (CLUSTER_PG_PORT, default 15433)
#   --redis-port P      the local Redis's port (CLUSTER_REDIS_PORT, default 16380)
#   --postgres-url URL  use this PostgreSQL instead of starting one (ENROUTE_POSTGRES_URL)
#   --redis-url URL     use this Redis instead of starting one (ENROUTE_REDIS_URL)
#   --secret S          the JWT secret of every node (ENROUTE_JWT_SECRET; default: generated once, kept in DIR/secret)
#   --cities FILE       the cities GeoJSON every node serves (default: one city everywhere)
#   --nginx-workers N   nginx worker processes (CLUSTER_NGINX_WORKERS, default: one per core)
#   --bin PATH          the enroute binary (ENROUTE_BIN; default: builds the release one)
#   --fresh             start with an empty local PostgreSQL and Redis (their data from earlier runs goes)
#   --no-seed           do not write the demo merchants and providers (enroute seed --city helsinki)
# Ports are below 32768 (the ephemeral range starts there). Every port must be free. Once the cluster is up,
# DIR/cluster.env holds its addresses (sourceable shell), and is removed when it stops.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "cluster: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; }

NODES="${CLUSTER_NODES:-3}"
PORT="${CLUSTER_PORT:-8090}"
NODE_PORT="${CLUSTER_NODE_PORT:-18301}"
DIR="${CLUSTER_DIR:-.cluster}"
PG_PORT="${CLUSTER_PG_PORT:-15433}"
REDIS_PORT="${CLUSTER_REDIS_PORT:-16380}"
POSTGRES_URL="${ENROUTE_POSTGRES_URL:-}"
REDIS_URL="${ENROUTE_REDIS_URL:-}"
SECRET="${ENROUTE_JWT_SECRET:-}"
CITIES=""
WORKERS="${CLUSTER_NGINX_WORKERS:-$(nproc)}"
BIN="${ENROUTE_BIN:-}"
FRESH=0 SEED=1
EXTRA=()

while [ $# -gt 0 ]; do
  case "$1" in
    --nodes|--port|--node-port|--dir|--pg-port|--redis-port|--postgres-url|--redis-url|--secret|--cities|--nginx-workers|--bin)
      [ $# -ge 2 ] || fail "$1 needs a value"
      case "$1" in
        --nodes) NODES=$2 ;; --port) PORT=$2 ;; --node-port) NODE_PORT=$2 ;; --dir) DIR=$2 ;;
        --pg-port) PG_PORT=$2 ;; --redis-port) REDIS_PORT=$2 ;; --postgres-url) POSTGRES_URL=$2 ;;
        --redis-url) REDIS_URL=$2 ;; --secret) SECRET=$2 ;; --cities) CITIES=$2 ;; --nginx-workers) WORKERS=$2 ;;
        --bin) BIN=$2 ;;
      esac
      shift 2 ;;
    --fresh) FRESH=1; shift ;;
    --no-seed) SEED=0; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; EXTRA=("$@"); break ;;
    *) usage; fail "unknown option '$1' (the options are above; \`enroute serve\` options go after --)" ;;
  esac
done

# A number in LO..HI, named by its flag and variable.
number() {
  local name=$1 value=$2 lo=$3 hi=$4
  case "$value" in ''|*[!0-9]*) fail "$name must be a number in $lo..$hi, got '$value'" ;; esac
  [ "$((10#$value))" -ge "$lo" ] && [ "$((10#$value))" -le "$hi" ] || fail "$name must be in $lo..$hi, got $value"
}
number "--nodes (CLUSTER_NODES)" "$NODES" 1 16
number "--port (CLUSTER_PORT)" "$PORT" 1 32767
number "--node-port (CLUSTER_NODE_PORT)" "$NODE_PORT" 1 $((32768 - NODES))
number "--nginx-workers (CLUSTER_NGINX_WORKERS)" "$WORKERS" 1 64
[ -n "$DIR" ] || fail "--dir (CLUSTER_DIR) must not be empty"
if [ -z "$POSTGRES_URL" ]; then
  number "--pg-port (CLUSTER_PG_PORT)" "$PG_PORT" 1 32767
else
  case "$POSTGRES_URL" in postgres://*|postgresql://*) ;; *) fail "--postgres-url (ENROUTE_POSTGRES_URL) must be postgres://user@host:port/db, got '$POSTGRES_URL'" ;; esac
fi
if [ -z "$REDIS_URL" ]; then
  number "--redis-port (CLUSTER_REDIS_PORT)" "$REDIS_PORT" 1 32767
else
  case "$REDIS_URL" in redis://*) ;; *) fail "--redis-url (ENROUTE_REDIS_URL) must be redis://host:port, got '$REDIS_URL'" ;; esac
fi
if [ -n "$SECRET" ] && [ "${#SECRET}" -lt 16 ]; then fail "--secret (ENROUTE_JWT_SECRET) must be at least 16 bytes"; fi
if [ -n "$CITIES" ]; then
  [ -r "$CITIES" ] || fail "--cities: cannot read '$CITIES'"
  CITIES=$(cd "$(dirname "$CITIES")" && pwd)/$(basename "$CITIES")
fi
if [ "$FRESH" = 1 ] && [ -n "$POSTGRES_URL$REDIS_URL" ]; then
  fail "--fresh empties the local PostgreSQL and Redis; it does not touch a server given by URL"
fi

# Every port the cluster will listen on must be free (a port in use is found now, not as a node's failure later).
port_in_use() { (echo > "/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ports=("$PORT")
for i in $(seq 1 "$NODES"); do ports+=($((NODE_PORT + i - 1))); done
for p in "${ports[@]}"; do port_in_use "$p" && fail "port $p is in use (choose others with --port / --node-port)"; done
[ "$(printf '%s\n' "${ports[@]}" | sort -u | wc -l)" -eq "${#ports[@]}" ] || fail "nginx's port $PORT is among the nodes' ports"

scripts/install-deps.sh cluster
if [ -z "$BIN" ]; then
  swift build -c release --product enroute
  BIN="$(swift build -c release --show-bin-path)/enroute"
fi
[ -x "$BIN" ] || fail "--bin (ENROUTE_BIN): '$BIN' is not an executable"

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
mkdir -p "$DIR/logs" "$DIR/nginx/tmp" "$DIR/blobs"
rm -f "$DIR/cluster.env"
# PostgreSQL runs as the postgres user under root, and that user must reach its folder: a clone under /root is closed
# to it, so root's cluster lives under /tmp (as make test's).
PG_DIR="${CLUSTER_PG_DIR:-$([ "$(id -u)" -eq 0 ] && echo "/tmp/enroute-cluster-pg-$PG_PORT" || echo "$DIR/pg")}"

NODE_PIDS=() NGINX_PID="" STARTED_PG=0 STARTED_REDIS=0 STOPPING=0
stop_all() {
  local status=$1 pid rc
  [ "$STOPPING" = 1 ] && return
  STOPPING=1
  set +e
  trap - INT TERM EXIT
  rm -f "$DIR/cluster.env"
  # nginx first (no new requests reach a draining node), then the nodes, which finish what is in flight.
  if [ -n "$NGINX_PID" ]; then kill -QUIT "$NGINX_PID" 2>/dev/null; wait "$NGINX_PID" 2>/dev/null; fi
  for pid in "${NODE_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${NODE_PIDS[@]}"; do
    wait "$pid"; rc=$?
    if [ "$rc" -ne 0 ] && [ "$status" -eq 0 ]; then echo "cluster: node process $pid exited $rc" >&2; status=1; fi
  done
  [ "$STARTED_REDIS" = 1 ] && scripts/redis.sh stop "$DIR/redis"
  [ "$STARTED_PG" = 1 ] && scripts/postgres.sh stop "$PG_DIR"
  exit "$status"
}
trap 'stop_all 1' EXIT
trap 'echo; echo "cluster: stopping nginx, the nodes (they drain), then Redis and PostgreSQL" >&2; stop_all 0' INT TERM

if [ -z "$POSTGRES_URL" ]; then
  if [ "$FRESH" = 1 ]; then POSTGRES_URL=$(scripts/postgres.sh reset "$PG_DIR" "$PG_PORT"); else POSTGRES_URL=$(scripts/postgres.sh start "$PG_DIR" "$PG_PORT"); fi
  STARTED_PG=1
fi
if [ -z "$REDIS_URL" ]; then
  [ "$FRESH" = 1 ] && { scripts/redis.sh stop "$DIR/redis"; rm -rf "$DIR/redis"; }
  REDIS_URL=$(scripts/redis.sh start "$DIR/redis" "$REDIS_PORT")
  STARTED_REDIS=1
fi
SECRET_HINT='"$ENROUTE_JWT_SECRET" (the secret given)'
if [ -z "$SECRET" ]; then
  [ -s "$DIR/secret" ] || (umask 077; openssl rand -hex 32 > "$DIR/secret")
  SECRET=$(cat "$DIR/secret")
  SECRET_HINT="\"\$(cat $DIR/secret)\""
fi
# The nodes get their store, bus, port and secret as flags; these variables would contradict them.
unset ENROUTE_DB ENROUTE_STORE ENROUTE_PORT ENROUTE_NODE ENROUTE_REDIS_URL ENROUTE_JWT_SECRET

if [ "$SEED" = 1 ]; then "$BIN" seed --city helsinki --store "$POSTGRES_URL" > "$DIR/logs/seed.log"; fi

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
URL="http://127.0.0.1:$PORT"
for i in $(seq 1 "$NODES"); do
  args=(serve --port $((NODE_PORT + i - 1)) --store "$POSTGRES_URL" --redis "$REDIS_URL" --node "node$i" --secret "$SECRET"
        --proof-dir "$DIR/blobs" --public-url "$URL")
  [ -n "$CITIES" ] && args+=(--cities "$CITIES")
  # In a session of their own: a terminal's Ctrl-C reaches this script, which then stops them in order.
  setsid "$BIN" "${args[@]}" "${EXTRA[@]}" > "$DIR/logs/node$i.log" 2>&1 &
  NODE_PIDS+=($!)
done

upstreams=""
for i in $(seq 1 "$NODES"); do upstreams+="    server 127.0.0.1:$((NODE_PORT + i - 1)) max_fails=0;"$'\n'; done
cat > "$DIR/nginx/nginx.conf" <<NGINX
# scripts/cluster.sh: nginx in front of $NODES EnRoute nodes (written afresh at every start)
daemon off;
worker_processes $WORKERS;
worker_rlimit_nofile 65536;
pid $DIR/nginx/nginx.pid;
error_log $DIR/logs/nginx-error.log warn;
events { worker_connections 16384; }
http {
  access_log off;
  client_body_temp_path $DIR/nginx/tmp/body;
  proxy_temp_path $DIR/nginx/tmp/proxy;
  fastcgi_temp_path $DIR/nginx/tmp/fastcgi;
  uwsgi_temp_path $DIR/nginx/tmp/uwsgi;
  scgi_temp_path $DIR/nginx/tmp/scgi;
  # A WebSocket handshake asks for an upgrade; any other request keeps its pooled upstream connection (empty Connection).
  map \$http_upgrade \$connection_upgrade { default upgrade; '' ''; }
  upstream enroute {
    least_conn;   # streams last for hours: new ones go to the node holding fewest
$upstreams    keepalive 64;
    keepalive_requests 100000;
    keepalive_timeout 25s;   # below the nodes' --idle-timeout (30 s), so nginx closes an idle one first
  }
  server {
    listen 127.0.0.1:$PORT;
    client_max_body_size 20m;
    location / {
      proxy_pass http://enroute;
      proxy_http_version 1.1;
      proxy_set_header Host \$http_host;
      proxy_set_header Upgrade \$http_upgrade;
      proxy_set_header Connection \$connection_upgrade;
      proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto \$scheme;
      # SSE: every event goes out as it arrives, and a quiet stream is not cut.
      proxy_buffering off;
      proxy_cache off;
      proxy_read_timeout 1h;
      proxy_send_timeout 1h;
    }
  }
}
NGINX
nginx -t -q -c "$DIR/nginx/nginx.conf" -p "$DIR/nginx" -e "$DIR/logs/nginx-error.log" ||
  { echo "cluster: nginx refused its configuration ($DIR/nginx/nginx.conf)" >&2; exit 1; }

# Each node answers /readyz, or the script stops naming the node and showing its log.
for i in $(seq 1 "$NODES"); do
  p=$((NODE_PORT + i - 1))
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$p/readyz" >/dev/null && break
    kill -0 "${NODE_PIDS[$((i - 1))]}" 2>/dev/null || break
    sleep 0.1
  done
  curl -sf "http://127.0.0.1:$p/readyz" >/dev/null ||
    { echo "cluster: node$i (port $p) did not come up; $DIR/logs/node$i.log:" >&2; tail -20 "$DIR/logs/node$i.log" >&2; exit 1; }
done
setsid nginx -c "$DIR/nginx/nginx.conf" -p "$DIR/nginx" -e "$DIR/logs/nginx-error.log" &
NGINX_PID=$!
for _ in $(seq 1 100); do curl -sf "$URL/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "$URL/healthz" >/dev/null || { echo "cluster: nginx on $PORT does not answer; $DIR/logs/nginx-error.log:" >&2; tail -20 "$DIR/logs/nginx-error.log" >&2; exit 1; }

hide() { sed -E 's#://([^:@/]*):[^@/]*@#://\1:***@#'; }
{
  echo "CLUSTER_URL=$URL"
  echo "CLUSTER_NODES=$NODES"
  echo "CLUSTER_NODE_PORTS=\"$(for i in $(seq 1 "$NODES"); do printf '%s ' $((NODE_PORT + i - 1)); done | sed 's/ $//')\""
  echo "CLUSTER_NODE_PIDS=\"${NODE_PIDS[*]}\""
  echo "CLUSTER_NGINX_PID=$NGINX_PID"
  echo "CLUSTER_POSTGRES_URL=$POSTGRES_URL"
  echo "CLUSTER_REDIS_URL=$REDIS_URL"
} > "$DIR/cluster.env.tmp"
mv "$DIR/cluster.env.tmp" "$DIR/cluster.env"

cat <<EOF

EnRoute cluster: $NODES node(s) behind nginx at $URL
  nodes:      $(for i in $(seq 1 "$NODES"); do printf 'node%s 127.0.0.1:%s  ' "$i" $((NODE_PORT + i - 1)); done)
  store:      $(echo "$POSTGRES_URL" | hide)
  live bus:   $REDIS_URL
  logs:       $DIR/logs/
  a token:    $BIN token --secret $SECRET_HINT --account ana --role customer   (or provider, merchant, ops)
  try:        curl -s $URL/healthz; the ops console: $URL/ops#token=<an ops token>
Ctrl-C stops everything.
EOF

# Until a signal, or until a node or nginx exits on its own.
set +e
wait -n "${NODE_PIDS[@]}" "$NGINX_PID"
rc=$?
set -e
[ "$STOPPING" = 1 ] && exit 0
for i in $(seq 1 "$NODES"); do
  if ! kill -0 "${NODE_PIDS[$((i - 1))]}" 2>/dev/null; then
    echo "cluster: node$i exited ($rc) on its own; $DIR/logs/node$i.log:" >&2; tail -20 "$DIR/logs/node$i.log" >&2
  fi
done
kill -0 "$NGINX_PID" 2>/dev/null || { echo "cluster: nginx exited ($rc) on its own; $DIR/logs/nginx-error.log:" >&2; tail -20 "$DIR/logs/nginx-error.log" >&2; }
stop_all 1
