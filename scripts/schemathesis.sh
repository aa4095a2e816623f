#!/usr/bin/env bash
# Property-based API testing: schemathesis generates requests from docs/openapi.yaml and sends them
# to a live `enroute serve` as a customer, a provider, a merchant and ops, then checks every answer:
# no server error, a status code, content type, headers and body the document allows.
# Bounded: EXAMPLES per operation (default 25) and a time budget per role (default 120 s).
# The live streams (/events, the chat socket /chat) are left out: they are tested by the Swift suite and never end on
# their own. Usage: scripts/schemathesis.sh [path/to/enroute]; ROLES="provider ops" runs only those roles.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-${ENROUTE_BIN:-$(swift build --show-bin-path)/enroute}}"
EXAMPLES="${EXAMPLES:-25}"; BUDGET="${BUDGET:-120}"; PORT="${PORT:-18411}"
WORK=$(mktemp -d)
LOGS="${LOGS:-.build/schemathesis}"; mkdir -p "$LOGS"
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill -TERM "$SERVER" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
SECRET="schemathesis-secret-0123456789abcdef"
"$BIN" seed --city helsinki --db "$WORK/st.sqlite" >/dev/null
# On central Helsinki's roads, as the demo serves: routes, guidance, road ETAs and the OSRM API answer for real.
"$BIN" graph build --osm data/osm/Helsinki-clean.osm.pbf --out "$WORK/helsinki.graph" >/dev/null 2>&1
"$BIN" serve --port "$PORT" --db "$WORK/st.sqlite" --secret "$SECRET" --rate-limits off --graph "$WORK/helsinki.graph" \
  --time-zone Europe/Helsinki > "$WORK/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null || { echo "enroute serve did not start:"; cat "$WORK/server.log"; exit 1; }

token() { "$BIN" token --secret "$SECRET" --account "$1" --role "$2"; }
# Real ids for the generator to find: an order of the customer, paid as the app pays (a saved card, a quote, the order naming it).
CUSTOMER=$(token st-customer customer); OPS=$(token st-ops ops)
API="http://127.0.0.1:$PORT"
as_customer() { curl -sf -X POST "$API$1" -H "Authorization: Bearer $CUSTOMER" -H 'Content-Type: application/json' "${@:2}"; }
BASKET='"merchantId":"m1","items":[{"sku":"coffee","quantity":1}],"destination":{"lat":60.1690,"lng":24.9490}'
as_customer /v1/payment-methods -d '{"token":"pm_card_visa","makeDefault":true}' >/dev/null
QUOTE=$(as_customer /v1/orders/quote -d "{$BASKET}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["quoteId"])')
as_customer /v1/orders -H "Idempotency-Key: st-seed-order-1" -d "{$BASKET,\"quoteId\":\"$QUOTE\"}" >/dev/null

# One role's run; its report goes to $LOGS/ROLE.log.
# The CLI through the interpreter the install script used, whether or not its scripts folder is on PATH.
st() { SCHEMATHESIS_HOOKS="$PWD/scripts/schemathesis_hooks.py" "${PYTHON:-python3}" -c 'import sys; from schemathesis.cli import schemathesis; sys.argv[0] = "st"; schemathesis()' "$@"; }
check() {
  st run "$API/openapi.yaml" --url "$API" -H "Authorization: Bearer $2" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
    --exclude-path-regex '/(events|chat)$' --max-examples "$EXAMPLES" --max-time "$BUDGET" --seed "$3" ${4:+--phases "$4"} \
    --request-timeout 10 --workers 2 --no-color --warnings off --suppress-health-check all > "$LOGS/$1.log" 2>&1
}
# A crash of the tool itself: a Runtime Error with no failure found (CPython 3.11.7's "AST constructor
# recursion depth mismatch" inside Hypothesis's coverage phase). It says nothing about the server.
tool_crashed() { ! grep -q "^Failures:" "$LOGS/$1.log" && grep -q "Runtime Error" "$LOGS/$1.log"; }
# Only connection errors: no check failed and nothing else went wrong.
failed=0
for role in ${ROLES:-customer provider merchant ops}; do
  echo "== schemathesis as $role"
  TOKEN=$(token "st-$role" "$role")
  ok=0
  # Up to five tries when the tool crashes: another seed, then without the coverage phase it crashes in most (the
  # same CPython bug also strikes Hypothesis's lambda descriptions in the other phases, three runs in a row once).
  for attempt in "18" "19" "20 examples,fuzzing,stateful" "21 examples,fuzzing,stateful" "22 examples,fuzzing,stateful"; do
    read -r seed phases <<< "$attempt"
    if check "$role" "$TOKEN" "$seed" "$phases"; then ok=1; break; fi
    tool_crashed "$role" || break
    echo "   schemathesis itself crashed (no failure found); trying again (seed $seed${phases:+, phases $phases} was this run)"
  done
  # Crashed on every try: the cases it ran before the crash still count when there were enough of them and none
  # failed (the crash is the tool's, and says nothing about the server).
  generated=$(grep -oE "[0-9]+ generated" "$LOGS/$role.log" | tail -n 1 | cut -d' ' -f1)
  if [ "$ok" -eq 0 ] && tool_crashed "$role" && [ "${generated:-0}" -ge "${MIN_CASES:-1000}" ]; then
    echo "   schemathesis crashed on every try, after ${generated} cases with no failure: counted as passed"
    ok=1
  fi
  if [ "$ok" -eq 0 ]; then
    failed=1
    grep -E "^(- |\[[0-9]{3}\]|    curl )|Response violates|Server error|Undocumented|Unsupported|Runtime Error" "$LOGS/$role.log" | head -n 60
    echo "(the whole report: $LOGS/$role.log)"
  fi
  grep -E "generated|failures? in|errors? in" "$LOGS/$role.log" | tail -n 2
done
cp "$WORK/server.log" "$LOGS/server.log"
if grep -q "Fatal\|Traceback" "$WORK/server.log"; then echo "the server logged a crash:"; cat "$WORK/server.log"; failed=1; fi
[ "$failed" -eq 0 ] && echo "schemathesis: every role passed" || { echo "schemathesis: failures above"; exit 1; }
