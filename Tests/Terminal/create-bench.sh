#!/usr/bin/env bash
# bench/create.sh's two halves at a tiny size against the built server: `server-bench creates --kind ride` makes a ride per
# customer (every create 201), `server-bench raw-creates` copies the newest one's rows into a fresh database under fresh
# keys (every create stored), and a mistyped option or a malformed value stops server-bench with exit status 64.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN="${ENROUTE_BIN:-$(swift build --show-bin-path)/enroute}"
BENCH="$(dirname "$BIN")/server-bench"
WORK=$(mktemp -d)
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
SECRET="create-smoke-secret-0123456789"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
"$BIN" serve --port "$PORT" --db "$WORK/enroute.sqlite" --secret "$SECRET" --rate-limits off > "$WORK/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 100); do (echo > "/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done

i=0
for bad in "--conections 4" "--connections four" "--kind bike"; do
  status=0
  # shellcheck disable=SC2086
  "$BENCH" creates --port "$PORT" --secret "$SECRET" $bad > "$WORK/bad-$i.txt" 2>&1 || status=$?
  [ "$status" = 64 ] || { echo "FAIL: server-bench creates $bad exited $status, not 64:"; cat "$WORK/bad-$i.txt"; exit 1; }
  i=$((i + 1))
done
grep -q "did you mean --connections" "$WORK/bad-0.txt" || { echo "FAIL: no suggestion for --conections:"; cat "$WORK/bad-0.txt"; exit 1; }

timeout 60 "$BENCH" creates --kind ride --port "$PORT" --secret "$SECRET" --customers 24 --connections 4 --seconds 5 \
  --out "$WORK/created.txt" > "$WORK/creates.txt" 2>&1 || { echo "FAIL: server-bench creates exited $?"; cat "$WORK/creates.txt"; exit 1; }
created=$(wc -l < "$WORK/created.txt")
[ "$created" = 24 ] || { echo "FAIL: $created rides created, not 24:"; cat "$WORK/creates.txt"; exit 1; }
grep -q '^/v1/trips/' "$WORK/created.txt" || { echo "FAIL: no ride paths in the output"; exit 1; }
kill -TERM "$SERVER"; wait "$SERVER" || true; SERVER=""

timeout 60 "$BENCH" raw-creates --template "$WORK/enroute.sqlite" --db "$WORK/raw.sqlite" --creates 300 --writers 3 > "$WORK/raw.txt" 2>&1 \
  || { echo "FAIL: server-bench raw-creates exited $?"; cat "$WORK/raw.txt"; exit 1; }
python3 - "$WORK" <<'PY'
import sqlite3, sys
work = sys.argv[1]
raw = sqlite3.connect(f"{work}/raw.sqlite")
server = sqlite3.connect(f"{work}/enroute.sqlite")
count = lambda db, sql: db.execute(sql).fetchone()[0]
trips = count(raw, "SELECT COUNT(*) FROM trips")
assert trips == 300, f"{trips} raw trips, not 300"
for table in ["trip_changes", "payment_attempts", "idempotency_keys"]:
    n = count(raw, f"SELECT COUNT(*) FROM {table}")
    assert n == 300, f"{n} rows in raw {table}, not 300"
ledger = count(server, "SELECT COUNT(*) FROM ledger WHERE trip_id = (SELECT id FROM trips ORDER BY created_at DESC LIMIT 1)")
assert count(raw, "SELECT COUNT(*) FROM ledger") == 300 * ledger, "the raw ledger rows are not the template's per create"
assert count(raw, "SELECT COUNT(DISTINCT customer_id) FROM trips") == 300, "rides need a customer each"
# Same tables and indexes as the server's database.
schema = lambda db: sorted(r for r in db.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"))
assert schema(raw) == schema(server), "the raw database's schema differs from the server's"
line = next(l for l in open(f"{work}/raw.txt") if l.startswith("RESULT raw-creates "))
rate, p50, p99, writers = line.split()[2:6]
assert float(rate) > 0 and 0 <= float(p50) <= float(p99) and writers == "3", line
print(f"ok: 24 rides created through the server; 300 raw creates ({float(rate):.0f}/s, p99 {float(p99):.2f} ms) with the server's rows and schema")
PY
