#!/usr/bin/env bash
# `make demo`: the living city. Builds EnRoute in release mode, builds central Helsinki's road graph
# (data/osm/Helsinki-clean) under .demo/ if missing, seeds the directory, starts the server routing on it, walks one
# delivery through the API with curl, then runs `enroute simulate` against it at real speed (a few dozen providers,
# riders and shoppers) and prints the ops console's address (with an ops token) and a share link for an order under
# way. Runs until Ctrl-C (SIGINT or SIGTERM), which stops the simulator (its report is printed) and then the server
# (it drains); exits 0. If the simulator or the server dies, says so, stops the other and exits 1.
#
# ENROUTE_BIN=PATH uses that binary instead of building (the terminal test passes the debug build); DEMO_PORT (or
# ENROUTE_PORT; default 8080), DEMO_DIR (default .demo), DEMO_PROVIDERS (30) and DEMO_DEMAND (rides,orders a minute;
# 1,3) change the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${DEMO_PORT:-${ENROUTE_PORT:-8080}}"
DIR="${DEMO_DIR:-.demo}"
PROVIDERS="${DEMO_PROVIDERS:-30}"
DEMAND="${DEMO_DEMAND:-1,3}"
mkdir -p "$DIR"
DB="$DIR/enroute.sqlite"
GRAPH="$DIR/helsinki.graph"
API="http://127.0.0.1:$PORT"

if [ -n "${ENROUTE_BIN:-}" ]; then
  BIN="$ENROUTE_BIN"
else
  scripts/install-deps.sh build demo
  swift build -c release --product enroute
  BIN="$(swift build -c release --show-bin-path)/enroute"
fi

SERVER="" SIM=""
# Stops the simulator first (so its providers can still go offline), then the server (it drains); waits for each.
stop_all() {
  local status=$1 pid rc
  set +e
  trap - INT TERM EXIT
  for pid in $SIM $SERVER; do
    kill -TERM "$pid" 2>/dev/null
    wait "$pid"; rc=$?
    [ "$rc" -eq 0 ] || { echo "demo: process $pid exited $rc" >&2; status=1; }
  done
  exit "$status"
}
trap 'stop_all 1' EXIT
trap 'echo; echo "demo: stopping the simulator, then the server (it drains)" >&2; stop_all 0' INT TERM

[ -f "$GRAPH" ] || "$BIN" graph build --osm data/osm/Helsinki-clean.osm.pbf --out "$GRAPH"
# A fresh database each run: trips a stopped city left under way would look live on the console (the secret stays).
rm -f "$DB" "$DB-wal" "$DB-shm"
"$BIN" seed --city helsinki --db "$DB"
unset ENROUTE_JWT_SECRET   # the database's own secret, for every token and the server
token() { "$BIN" token --db "$DB" --account "$1" --role "$2"; }
OPS=$(token ops-1 ops)   # also writes the database's JWT secret (beside it) on a first run
# The simulator signs each party's token with the server's secret.
ENROUTE_JWT_SECRET=$(cat "$DB.secret")
export ENROUTE_JWT_SECRET
# In a session of its own, so a terminal's Ctrl-C reaches the simulator and this script only: the simulator winds down
# (its providers go offline, their last steps sent) against a server that is still up, then stop_all stops the server.
# Out of the script's group, the server watches the script itself: if the script dies without its trap (SIGKILL), the
# server stops with it.
setsid "$BIN" serve --port "$PORT" --db "$DB" --graph "$GRAPH" --time-zone Europe/Helsinki --parent-pid $$ \
  > "$DIR/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 100); do curl -sf "$API/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "$API/healthz" >/dev/null || { echo "demo: the server did not come up; see $DIR/server.log" >&2; exit 1; }

CUSTOMER=$(token ana customer); COURIER=$(token rider-1 provider); MERCHANT=$(token m1 merchant)
say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
call() { local method=$1 path=$2 tok=$3; shift 3; curl -s -X "$method" "$API$path" -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' "$@"; echo; }
field() { python3 -c "import sys, json; print(json.load(sys.stdin)[sys.argv[1]])" "$1"; }
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }
step() { call POST "/v1/provider/trips/$ID/steps" "$COURIER" -d "{\"changeId\":\"$1\",\"step\":\"$2\",\"deviceTime\":\"$(now)\"}"; }

# The first event on the provider's live stream that names an offer: its offerId.
first_offer() {
  python3 - "$API/v1/provider/events" "$1" <<'PY'
import sys, json, signal, urllib.request
signal.signal(signal.SIGINT, lambda *_: sys.exit(130))   # Ctrl-C here: the script's trap stops everything, no traceback
req = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer " + sys.argv[2], "Accept": "text/event-stream"})
with urllib.request.urlopen(req, timeout=20) as stream:
    event = None
    for raw in stream:
        line = raw.decode().rstrip("\n")
        if line.startswith("event:"): event = line[6:].strip()
        elif line.startswith("data:") and event == "offer":
            print(json.loads(line[5:])["offerId"]); break
PY
}

say "One delivery by hand: Ana saves the sandbox's test Visa, takes a quote and orders two coffees from Kamppi Kitchen (m1)"
call POST /v1/provider/availability "$COURIER" -d '{"online":true,"position":{"lat":60.1696,"lng":24.9377}}' >/dev/null
BASKET='"merchantId":"m1","items":[{"sku":"coffee","quantity":2}],"destination":{"lat":60.1715,"lng":24.9475}'
call POST /v1/payment-methods "$CUSTOMER" -d '{"token":"pm_card_visa","makeDefault":true}' >/dev/null
QUOTE_ID=$(call POST /v1/orders/quote "$CUSTOMER" -d "{$BASKET}" | field quoteId)
ID=$(call POST /v1/orders "$CUSTOMER" -H "Idempotency-Key: $(cat /proc/sys/kernel/random/uuid)" -d "{$BASKET,\"quoteId\":\"$QUOTE_ID\"}" | field orderId)
echo "order $ID"
say "The merchant accepts (10 minutes), the courier accepts the offer, the goods are ready and on the way"
call POST "/v1/merchant/orders/$ID/accept" "$MERCHANT" -d '{"preparationMinutes":10}' >/dev/null
OFFER=$(first_offer "$COURIER")
call POST "/v1/provider/offers/$OFFER/accept" "$COURIER" >/dev/null
call POST "/v1/merchant/orders/$ID/ready" "$MERCHANT" >/dev/null
step c-1 onTheWay >/dev/null
call POST /v1/provider/locations "$COURIER" -d "{\"batchId\":\"b-1\",\"fixes\":[{\"lat\":60.1705,\"lng\":24.9415,\"heading\":90,\"speed\":6,\"accuracy\":6,\"recordedAt\":\"$(now)\"}]}" >/dev/null
call GET "/v1/orders/$ID/tracking" "$CUSTOMER"
say "A retried step is applied once (same version); delivered; a step the state no longer allows gets 409; a stranger gets 404"
step c-1 onTheWay | field version
step c-2 delivered | field status
step c-3 arriving | field status
curl -s -o /dev/null -w '%{http_code}\n' "$API/v1/orders/$ID/tracking" -H "Authorization: Bearer $(token eve customer)"
call POST /v1/provider/availability "$COURIER" -d '{"online":false}' >/dev/null

say "The living city: $PROVIDERS providers drive Helsinki's roads at real speed, demand $DEMAND rides,orders a minute (enroute simulate)"
"$BIN" simulate --server "$API" --map "$GRAPH" --speedup 1 --providers "$PROVIDERS" --demand "$DEMAND" --duration forever &
SIM=$!

# An order under way with a courier on it (the ops API), shared by its own customer.
SHARE=""
for _ in $(seq 1 240); do
  kill -0 "$SIM" 2>/dev/null || break
  SHARE=$(python3 - "$API" "$OPS" <<'PY' || true
import json, subprocess, sys, urllib.request, urllib.error
api, ops = sys.argv[1], sys.argv[2]
def get(path, token):
    with urllib.request.urlopen(urllib.request.Request(api + path, headers={"Authorization": "Bearer " + token}), timeout=5) as r:
        return json.load(r)
for trip in get("/v1/ops/overview", ops)["trips"]:
    if trip["kind"] != "delivery" or not trip.get("providerId"):
        continue
    customer = get("/v1/ops/trips/" + trip["id"], ops)["customerId"]
    print(trip["id"], customer)
    break
PY
)
  if [ -n "$SHARE" ]; then
    read -r ORDER SHOPPER <<<"$SHARE"
    SHARE=$(call POST "/v1/orders/$ORDER/share" "$(token "$SHOPPER" customer)" | python3 -c "import sys, json; print(json.load(sys.stdin).get('url', ''))" || true)
    [ -n "$SHARE" ] && break
  fi
  sleep 0.5
done
kill -0 "$SIM" 2>/dev/null || { echo "demo: the simulator died before the city came alive" >&2; exit 1; }

say "Open in a browser:"
echo "  ops console:  $API/ops#token=$OPS"
if [ -n "$SHARE" ]; then echo "  share link:   $SHARE   (order $ORDER, $SHOPPER's)"; else echo "  share link:   no order had a courier within two minutes"; fi
cat <<HELP
Server log: $DIR/server.log; database $DB. Mint a token: $BIN token --db $DB --account someone --role customer
Press Ctrl-C to stop (the simulator prints its report, the server drains and exits cleanly).
HELP

# Runs until Ctrl-C (the trap) or until one of the two dies.
wait -n -p DIED "$SIM" "$SERVER" || true
if [ "$DIED" = "$SIM" ]; then echo "demo: the simulator stopped; stopping the server" >&2; SIM=""
else echo "demo: the server stopped; stopping the simulator" >&2; SERVER=""; fi
stop_all 1
