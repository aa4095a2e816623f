#!/usr/bin/env bash
# Three `enroute serve` processes on one PostgreSQL and one Redis, started here by the project's scripts on free
# ports, and the faults a cluster meets (Tests/Terminal/cluster_faults.py): one Idempotency-Key sent to three nodes at
# once, kill -9 of a node under load, kill -STOP of a node past its search lease then -CONT, a partition between a
# node and Redis (a proxy of the test's own), a Redis restart under a watcher, a PostgreSQL restart (503 problem+json meanwhile, recovery without restarting a node).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN="${ENROUTE_BIN:-$(swift build --show-bin-path)/enroute}"
WORK=$(mktemp -d /tmp/enroute-cluster-faults.XXXXXX)
chmod 755 "$WORK"   # under root the postgres user must reach the data folder
cleanup() {
  set +e
  scripts/redis.sh stop "$WORK/redis" >/dev/null 2>&1
  scripts/postgres.sh stop "$WORK/pg" >/dev/null 2>&1
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
read -r PG_PORT REDIS_PORT P1 P2 P3 PROXY_PORT < <(python3 - <<'PY'
import random, socket
# Free ports below 32768 (the project's scripts take no others), held until all six are found.
held = []
while len(held) < 6:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", random.randrange(20000, 32000)))
        held.append(s)
    except OSError:
        s.close()
print(" ".join(str(s.getsockname()[1]) for s in held))
PY
)
PG_URL=$(scripts/postgres.sh reset "$WORK/pg" "$PG_PORT")
REDIS_URL=$(scripts/redis.sh start "$WORK/redis" "$REDIS_PORT")
"$BIN" seed --city helsinki --store "$PG_URL" > "$WORK/seed.log"
python3 Tests/Terminal/cluster_faults.py --bin "$BIN" --work "$WORK" --pg-url "$PG_URL" --pg-dir "$WORK/pg" --pg-port "$PG_PORT" \
  --redis-url "$REDIS_URL" --redis-dir "$WORK/redis" --redis-port "$REDIS_PORT" --ports "$P1" "$P2" "$P3" --proxy-port "$PROXY_PORT" || {
  for f in "$WORK"/node*.log; do echo "--- $f (last lines)"; tail -15 "$f"; done; exit 1; }
