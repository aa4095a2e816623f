#!/usr/bin/env bash
# Counts the terminal tracker's tracking requests per order-minute against a live server, by stage:
# picking (limit 4), on the way (limit 12), in the background (limit 0). Reads the server's /metrics.
set -euo pipefail
cd "$(dirname "$0")/.."
WINDOW="${WINDOW:-60}"
scripts/install-deps.sh build
swift build -c release --product enroute >/dev/null
BIN="$(swift build -c release --show-bin-path)/enroute"
WORK=$(mktemp -d); SECRET="bench-secret-$(date +%s%N)"
"$BIN" seed --city helsinki --db "$WORK/db.sqlite" >/dev/null
"$BIN" serve --port 0 --db "$WORK/db.sqlite" --secret "$SECRET" 2> "$WORK/server.log" &
SERVER=$!
TRACKER=""
cleanup() { [ -n "$TRACKER" ] && kill "$TRACKER" 2>/dev/null; kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
PORT=""
for _ in $(seq 1 200); do PORT=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$WORK/server.log" | head -1 | cut -d: -f3 || true); [ -n "$PORT" ] && break; sleep 0.05; done
API="http://127.0.0.1:$PORT"
token() { "$BIN" token --secret "$SECRET" --account "$1" --role "$2"; }
CUSTOMER=$(token ana customer); COURIER=$(token rider-1 provider); MERCHANT=$(token m1 merchant); OPS=$(token ops-1 ops)
post() { curl -sf -X POST "$API$1" -H "Authorization: Bearer $2" -H 'Content-Type: application/json' ${3:+-d "$3"} "${@:4}" >/dev/null; }
field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
# As the app orders: a saved card (the sandbox's test Visa), a quote for the basket, then the order naming it.
BASKET='"merchantId":"m1","items":[{"sku":"tea","quantity":1}],"destination":{"lat":60.1841,"lng":24.9497}'
post /v1/payment-methods "$CUSTOMER" '{"token":"pm_card_visa","makeDefault":true}'
QUOTE=$(curl -sf -X POST "$API/v1/orders/quote" -H "Authorization: Bearer $CUSTOMER" -H 'Content-Type: application/json' -d "{$BASKET}" | field quoteId)
ORDER=$(curl -sf -X POST "$API/v1/orders" -H "Authorization: Bearer $CUSTOMER" -H 'Content-Type: application/json' -H "Idempotency-Key: bench-$$-1" \
  -d "{$BASKET,\"quoteId\":\"$QUOTE\"}" | field orderId)
count() { curl -s -H "Authorization: Bearer $OPS" "$API/metrics" | awk '/^enroute_http_requests_total\{method="GET",route="\/v1\/orders\/\{id\}\/tracking"/ { n += $2 } END { print n + 0 }'; }
measure() {   # measure LABEL LIMIT
  sleep 3   # let the cadence settle after the change
  local before after; before=$(count); sleep "$WINDOW"; after=$(count)
  python3 -c "n=($after-$before)*60/$WINDOW; print(f'{\"$1\":12} {n:6.1f} per order-minute   limit {$2}   {\"ok\" if n <= $2 else \"OVER\"}')"
}
post "/v1/merchant/orders/$ORDER/accept" "$MERCHANT" '{"preparationMinutes":20}'
"$BIN" track "$ORDER" --server "$API" --token "$CUSTOMER" > /dev/null 2>&1 &
TRACKER=$!
echo "tracker requests per order-minute, measured over ${WINDOW}s windows"
measure picking 4
post "/v1/ops/trips/$ORDER/assign" "$OPS" "{\"providerId\":\"rider-1\"}"
post "/v1/merchant/orders/$ORDER/ready" "$MERCHANT"
post "/v1/provider/trips/$ORDER/steps" "$COURIER" "{\"changeId\":\"s1\",\"step\":\"onTheWay\",\"deviceTime\":\"$(date -u +%FT%TZ)\"}"
measure "on the way" 12
kill -USR1 "$TRACKER"
measure background 0
