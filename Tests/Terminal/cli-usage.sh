#!/usr/bin/env bash
# The built `enroute` refuses an unknown flag or a malformed value before doing anything: exit status 64
# (EX_USAGE) and a message naming the flag and the closest known one. Nothing listens, nothing is written.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN="${ENROUTE_BIN:-$(swift build --show-bin-path)/enroute}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

expect_usage() {   # expect_usage MESSAGE COMMAND...
  local message="$1"; shift
  # The timeout turns a command that ignores the flag and starts serving into a failure, not a hang.
  set +e; timeout 10 "$@" > out.txt 2> err.txt; local rc=$?; set -e
  if [ "$rc" -ne 64 ]; then echo "FAIL: '$*' exited $rc, not 64"; cat err.txt; exit 1; fi
  if ! grep -qF -- "$message" err.txt; then echo "FAIL: '$*' did not say: $message"; cat err.txt; exit 1; fi
  echo "ok: $* -> 64, $message"
}

expect_usage "unknown option --prot (did you mean --port?)" "$BIN" serve --prot 8081
expect_usage "unknown option --stor (did you mean --store?)" "$BIN" serve --stor postgres://localhost/enroute
expect_usage "--store: unknown scheme 'mysql://'" "$BIN" serve --store mysql://localhost/enroute
expect_usage "--store postgres://… needs the JWT secret from --secret or ENROUTE_JWT_SECRET" "$BIN" serve --store postgres://127.0.0.1:1/enroute
expect_usage "give the database once: --store or --db, not both" "$BIN" serve --store ./a.sqlite --db ./b.sqlite
expect_usage "ENROUTE_PORT must be a whole number, got 'abc'" env ENROUTE_PORT=abc "$BIN" serve
expect_usage "--port must be 0...65535, got 70000" "$BIN" serve --port 70000
expect_usage "unknown option --acount (did you mean --account?)" "$BIN" token --acount ana --role customer
expect_usage "unknown option --event (did you mean --events?)" "$BIN" track o1 --event
expect_usage "unknown option --form (did you mean --from?)" "$BIN" ride --form 60.1,24.9 --to 60.2,24.9
expect_usage "unknown option --crad (did you mean --card?)" "$BIN" ride --from 60.1,24.9 --to 60.2,24.9 --crad pm_card_visa
expect_usage "--card must be a payment method token such as pm_card_visa, got 'visa'" "$BIN" ride --from 60.1,24.9 --to 60.2,24.9 --card visa --token t
expect_usage "unknown option --tokn (did you mean --token?)" "$BIN" chat T1 --tokn t
expect_usage "--server must be an http:// URL for the chat WebSocket" "$BIN" chat T1 --server https://enroute.example --token t
expect_usage "--speed must be a number, got 'fast'" "$BIN" drive --server http://127.0.0.1:1 --token t --speed fast
expect_usage "unknown option --provider (did you mean --providers?)" "$BIN" simulate --provider 10
expect_usage "--demand must be RIDES,ORDERS per minute" "$BIN" simulate --demand 6
expect_usage "--faults: unknown fault 'jitter'" "$BIN" simulate --faults jitter=1
expect_usage "--duration must be a time such as 90s, 30m or 1h, or forever, got 'never'" "$BIN" simulate --duration never
expect_usage "--speedup must be 1 with --server" "$BIN" simulate --server http://127.0.0.1:1 --speedup 10
expect_usage "--dispatch must be greedy or batched, got 'fifo'" "$BIN" simulate --dispatch fifo
expect_usage "--dispatch cannot be used with --server" "$BIN" simulate --server http://127.0.0.1:1 --speedup 1 --dispatch batched
expect_usage "--telephony: phone is not a relay (log or twilio-proxy)" "$BIN" serve --telephony phone
expect_usage "--telephony-pool: '0401234567' must be an E.164 number" "$BIN" serve --telephony-pool +358401234567,0401234567
expect_usage "--telephony twilio-proxy needs --twilio-account-sid" "$BIN" serve --telephony twilio-proxy
expect_usage "--twilio-proxy-service needs --telephony twilio-proxy" "$BIN" serve --twilio-proxy-service KS00000000000000000000000000000000
expect_usage "unknown command 'serv' (did you mean serve?)" "$BIN" serv
printf '{"type":"Feature"}' > cities.json
expect_usage "--cities cities.json: type: must be a GeoJSON FeatureCollection" "$BIN" serve --cities cities.json
expect_usage "--cities: cannot read missing.json" "$BIN" serve --cities missing.json
expect_usage "--node needs --redis" "$BIN" serve --node a
expect_usage "--redis: " "$BIN" serve --redis http://127.0.0.1:6379
expect_usage "--node must be 1 to 64 letters, digits, '-' or '_', got 'a b'" "$BIN" serve --redis redis://127.0.0.1:1 --node "a b"
[ ! -e enroute.sqlite ] || { echo "FAIL: a refused serve created a database"; exit 1; }
echo "passed"
