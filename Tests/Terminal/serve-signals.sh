#!/usr/bin/env bash
# `enroute serve` started from a shell, as an operator or a service manager starts it, drains and exits 0 on SIGTERM
# and on SIGINT, within seconds, saying so in its log.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN="${ENROUTE_BIN:-$(swift build --show-bin-path)/enroute}"
WORK=$(mktemp -d)
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill -9 "$SERVER" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
for sig in TERM INT; do
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  "$BIN" serve --port "$PORT" --db "$WORK/$sig.sqlite" --secret "signals-secret-0123456789abcdef" > "$WORK/$sig.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 1 100); do (echo > "/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
  kill -"$sig" "$SERVER"
  for _ in $(seq 1 100); do kill -0 "$SERVER" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$SERVER" 2>/dev/null; then echo "FAIL: enroute serve still runs 10 s after SIG$sig"; cat "$WORK/$sig.log"; exit 1; fi
  status=0; wait "$SERVER" || status=$?
  SERVER=""
  [ "$status" = 0 ] || { echo "FAIL: enroute serve exited $status after SIG$sig"; cat "$WORK/$sig.log"; exit 1; }
  grep -q "stopped cleanly" "$WORK/$sig.log" || { echo "FAIL: no 'stopped cleanly' after SIG$sig"; cat "$WORK/$sig.log"; exit 1; }
  echo "ok: SIG$sig drains and exits 0"
done
