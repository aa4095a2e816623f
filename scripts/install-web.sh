#!/usr/bin/env bash
# Installs what the browser pages and their tests need (Leaflet, headless Chromium, chromium-driver): the `web`
# group of scripts/install-deps.sh, idempotent and non-interactive. Usage: scripts/install-web.sh
exec "$(dirname "$0")/install-deps.sh" web
