#!/usr/bin/env bash
# `make demo`: builds EnRoute in release mode, builds central Helsinki's road graph (data/osm/Helsinki-clean)
# under .demo/ if missing, starts the backend routing on it, walks one delivery through the API with a token per
# party, then keeps serving until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${ENROUTE_PORT:-8080}"
DIR=.demo
mkdir -p "$DIR"
DB="$DIR/enroute.sqlite"
GRAPH="$DIR/helsinki.graph"

swift build -c release --product enroute
BIN="$(swift build -c release --show-bin-path)/enroute"

[ -f "$GRAPH" ] || "$BIN" graph build --osm data/osm/Helsinki-clean.osm.pbf --out "$GRAPH"
"$BIN" seed --city helsinki --db "$DB"
"$BIN" serve --port "$PORT" --db "$DB" --graph "$GRAPH" --time-zone Europe/Helsinki &
SERVER=$!
trap 'kill -TERM $SERVER 2>/dev/null; wait $SERVER 2>/dev/null' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null || { echo "the server did not come up" >&2; exit 1; }

token() { "$BIN" token --db "$DB" --account "$1" --role "$2"; }
CUSTOMER=$(token ana customer); COURIER=$(token rider-1 provider); MERCHANT=$(token m1 merchant); OPS=$(token ops-1 ops)
API="http://127.0.0.1:$PORT"
say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
call() { local method=$1 path=$2 tok=$3; shift 3; curl -s -X "$method" "$API$path" -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' "$@"; echo; }
field() { python3 -c "import sys, json; print(json.load(sys.stdin)[sys.argv[1]])" "$1"; }
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }

# The first event on the provider's live stream that names an offer: its offerId.
first_offer() {
  python3 - "$API/v1/provider/events" "$1" <<'PY'
import sys, json, urllib.request
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

say "0. A courier goes online beside Kamppi Kitchen"
call POST /v1/provider/availability "$COURIER" -d '{"online":true,"position":{"lat":60.1696,"lng":24.9377}}' >/dev/null
say "1. Ana saves a card (a payment provider's token; the sandbox gateway's test Visa), asks for a price, then orders two coffees with that quote (Idempotency-Key required)"
BASKET='"merchantId":"m1","items":[{"sku":"coffee","quantity":2}],"destination":{"lat":60.1715,"lng":24.9475}'
call POST /v1/payment-methods "$CUSTOMER" -d '{"token":"pm_card_visa","makeDefault":true}'
QUOTE=$(call POST /v1/orders/quote "$CUSTOMER" -d "{$BASKET}")
echo "$QUOTE"
QUOTE_ID=$(echo "$QUOTE" | field quoteId)
ORDER=$(call POST /v1/orders "$CUSTOMER" -H "Idempotency-Key: $(cat /proc/sys/kernel/random/uuid)" -d "{$BASKET,\"quoteId\":\"$QUOTE_ID\"}")
echo "$ORDER"
ID=$(echo "$ORDER" | field orderId)
say "2. The merchant accepts with a 10-minute preparation time; dispatch offers the order to the courier, who accepts; the goods are ready"
call POST "/v1/merchant/orders/$ID/accept" "$MERCHANT" -d '{"preparationMinutes":10}' >/dev/null
OFFER=$(first_offer "$COURIER")
echo "offer $OFFER"
call POST "/v1/provider/offers/$OFFER/accept" "$COURIER" >/dev/null
call POST "/v1/merchant/orders/$ID/ready" "$MERCHANT" >/dev/null
call GET "/v1/orders/$ID/tracking" "$CUSTOMER"
say "3. The courier collects the goods and reports a position"
call POST "/v1/provider/trips/$ID/steps" "$COURIER" -d "{\"changeId\":\"c-1\",\"step\":\"onTheWay\",\"deviceTime\":\"$(now)\"}" >/dev/null
call POST /v1/provider/locations "$COURIER" -d "{\"batchId\":\"b-1\",\"fixes\":[{\"lat\":60.1705,\"lng\":24.9415,\"heading\":90,\"speed\":6,\"accuracy\":6,\"recordedAt\":\"$(now)\"}]}" >/dev/null
call GET "/v1/orders/$ID/tracking" "$CUSTOMER"
say "4. A retried step (same change id) is applied once; a step the state no longer allows gets 409 with the real order"
call POST "/v1/provider/trips/$ID/steps" "$COURIER" -d "{\"changeId\":\"c-1\",\"step\":\"onTheWay\",\"deviceTime\":\"$(now)\"}" | field version
call POST "/v1/provider/trips/$ID/steps" "$COURIER" -d "{\"changeId\":\"c-2\",\"step\":\"delivered\",\"deviceTime\":\"$(now)\"}" | field status
call POST "/v1/provider/trips/$ID/steps" "$COURIER" -d "{\"changeId\":\"c-3\",\"step\":\"arriving\",\"deviceTime\":\"$(now)\"}"
say "5. Someone else's token sees nothing (404, not 403)"
call GET "/v1/orders/$ID/tracking" "$(token eve customer)"

say "The backend keeps running on $API (database $DB). Try:"
cat <<HELP
  curl -s $API/v1/orders/$ID/tracking -H "Authorization: Bearer $CUSTOMER"
  curl -sN $API/v1/orders/$ID/events  -H "Authorization: Bearer $CUSTOMER"      # live SSE
  curl -s $API/v1/ops/trips -H "Authorization: Bearer $OPS"
  curl -s $API/metrics
  $BIN token --db $DB --account someone --role customer
Press Ctrl-C to stop (the server drains and exits cleanly).
HELP
wait $SERVER
