#!/usr/bin/env bash
# Takes the README's two screenshots (docs/images/console.png and share-page.png): runs `make demo`'s script on
# DEMO_PORT (default 18080) with ENROUTE_BIN (default: the debug build), waits SETTLE seconds (default 60) for the city
# to fill, shoots the ops console and the share link with headless Chromium (scripts/install-web.sh), then stops the
# demo with Ctrl-C's signal.
set -euo pipefail
cd "$(dirname "$0")/.."
export ENROUTE_BIN="${ENROUTE_BIN:-$(swift build --show-bin-path)/enroute}" DEMO_PORT="${DEMO_PORT:-18080}"
OUT=$(mktemp)
setsid scripts/demo.sh > "$OUT" 2>&1 &
DEMO=$!
trap 'kill -INT -"$DEMO" 2>/dev/null || true; wait "$DEMO" 2>/dev/null || true; rm -f "$OUT"' EXIT
for _ in $(seq 1 300); do grep -q "share link:" "$OUT" && break; sleep 1; done
grep -q "share link:" "$OUT" || { echo "screenshots: the demo did not start:"; cat "$OUT"; exit 1; }
sleep "${SETTLE:-60}"
shoot() {   # shoot FILE URL
  timeout 60 chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,800 \
    --timeout=6000 --screenshot="$PWD/docs/images/$1" "$2" > /dev/null 2>&1
  echo "screenshots: docs/images/$1"
}
mkdir -p docs/images
shoot console.png "$(grep "ops console:" "$OUT" | awk '{print $3}')"
shoot share-page.png "$(grep "share link:" "$OUT" | awk '{print $3}')"
