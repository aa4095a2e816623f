#!/usr/bin/env bash
# Installs what the browser pages and their tests need: Leaflet from Debian (libjs-leaflet, served by
# `enroute serve` from /usr/share/javascript/leaflet), headless Chromium and its WebDriver (chromium-driver).
# Idempotent and non-interactive: only the packages dpkg reports absent. Usage: scripts/install-web.sh
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

want=(libjs-leaflet chromium chromium-driver fonts-dejavu-core)
missing=()
for p in "${want[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "install-web: installing ${missing[*]}"
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
