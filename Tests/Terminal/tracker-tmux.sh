#!/usr/bin/env bash
# The terminal tracker in tmux against a live `enroute serve`: the steps advance, "Updated N s ago"
# grows, the rider pin hides after 2 minutes without a fix, and the ETA says "Running a little late"
# once its latest time has passed. Waits poll the screen with deadlines; nothing sleeps for sync.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN="${ENROUTE_BIN:-$(swift build --show-bin-path)/enroute}"
WORK=$(mktemp -d)
SESSION="enroute-tracker-$$"
SECRET="tmux-test-secret-0123456789"
cleanup() { tmux kill-session -t "$SESSION" 2>/dev/null || true; kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

"$BIN" seed --city helsinki --db "$WORK/db.sqlite" >/dev/null
"$BIN" serve --port 0 --db "$WORK/db.sqlite" --secret "$SECRET" 2> "$WORK/server.log" &
SERVER=$!
PORT=""
for _ in $(seq 1 200); do
  PORT=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$WORK/server.log" | head -1 | cut -d: -f3 || true)
  [ -n "$PORT" ] && break; sleep 0.05
done
[ -n "$PORT" ] || { echo "server did not start"; cat "$WORK/server.log"; exit 1; }
API="http://127.0.0.1:$PORT"
token() { "$BIN" token --secret "$SECRET" --account "$1" --role "$2"; }
CUSTOMER=$(token ana customer); COURIER=$(token rider-1 provider); MERCHANT=$(token m1 merchant); OPS=$(token ops-1 ops)
post() { curl -sf -X POST "$API$1" -H "Authorization: Bearer $2" -H 'Content-Type: application/json' ${3:+-d "$3"} "${@:4}"; }
field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
# As the app does: a saved card (the sandbox's test Visa), a quote for the basket, then the order naming it.
BASKET='"merchantId":"m1","items":[{"sku":"tea","quantity":1}],"destination":{"lat":60.1841,"lng":24.9497}'
post /v1/payment-methods "$CUSTOMER" '{"token":"pm_card_visa","makeDefault":true}' >/dev/null
QUOTE=$(post /v1/orders/quote "$CUSTOMER" "{$BASKET}" | field quoteId)
ORDER=$(post /v1/orders "$CUSTOMER" "{$BASKET,\"quoteId\":\"$QUOTE\"}" -H "Idempotency-Key: tmux-$$-order" | field orderId)

tmux new-session -d -s "$SESSION" -x 100 -y 30 "$BIN track $ORDER --server $API --token $CUSTOMER --events; sleep 600"
screen() { tmux capture-pane -p -t "$SESSION"; }
wait_for() {   # wait_for PATTERN SECONDS
  local deadline=$((SECONDS + $2))
  until screen | grep -Eq "$1"; do
    if [ $SECONDS -ge $deadline ]; then echo "FAIL: '$1' not shown within $2 s. Screen:"; screen; exit 1; fi
    sleep 0.25
  done
  echo "ok: $1"
}
passed=0
wait_for '\[>\] Order placed' 20; passed=$((passed + 1))
post "/v1/merchant/orders/$ORDER/accept" "$MERCHANT" '{"preparationMinutes":5}' >/dev/null
wait_for '\[>\] Picking your items' 20; passed=$((passed + 1))
post "/v1/ops/trips/$ORDER/assign" "$OPS" "{\"providerId\":\"rider-1\"}" >/dev/null
post "/v1/merchant/orders/$ORDER/ready" "$MERCHANT" >/dev/null
post "/v1/provider/trips/$ORDER/steps" "$COURIER" "{\"changeId\":\"s1\",\"step\":\"onTheWay\",\"deviceTime\":\"$(date -u +%FT%TZ)\"}" >/dev/null
wait_for '\[>\] On the way' 20; passed=$((passed + 1))
# One fix, 25 s old, at the door; then silence.
post /v1/provider/locations "$COURIER" "{\"batchId\":\"b1\",\"fixes\":[{\"lat\":60.1841,\"lng\":24.9497,\"heading\":0,\"speed\":0,\"accuracy\":5,\"recordedAt\":\"$(date -u -d '-25 seconds' +%FT%TZ)\"}]}" >/dev/null
wait_for 'Updated 2[5-9] s ago' 20; passed=$((passed + 1))
first=$(screen | grep -o 'Updated [0-9]* s ago' | grep -o '[0-9]*')
wait_for "Updated ([3-9][0-9]|1[0-9][0-9]) s ago" 20
later=$(screen | grep -o 'Updated [0-9]* s ago' | grep -o '[0-9]*')
[ "$later" -gt "$first" ] || { echo "FAIL: the age did not grow ($first -> $later)"; exit 1; }
echo "ok: the age grew from $first s to $later s"; passed=$((passed + 1))
wait_for 'Rider: not shown' 130; passed=$((passed + 1))
wait_for 'Running a little late' 60; passed=$((passed + 1))
echo "terminal tracker in tmux: all $passed checks passed"
