#!/usr/bin/env bash
# Installs the Debian packages EnRoute needs, only those dpkg reports absent.
# Idempotent and non-interactive. Usage: scripts/install-deps.sh [build|test|bench|web|demo|cluster|profile|callgrind]...
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

build=(pkg-config libsqlite3-dev libssl-dev libcurl4-openssl-dev zlib1g-dev libpq-dev)
test=(tmux python3 curl)
bench=(nginx wrk libnginx-mod-nchan)
# The browser pages and their tests: Leaflet (served by `enroute serve` from /usr/share/javascript/leaflet),
# headless Chromium and its WebDriver.
web=(libjs-leaflet chromium chromium-driver fonts-dejavu-core)
# `make demo`: curl and python3 for its walk-through, Leaflet for the console's and share page's maps.
demo=(curl python3 libjs-leaflet)
# `make cluster` (scripts/cluster.sh): nginx in front of the nodes, curl for their health checks, openssl for the
# secret; PostgreSQL and Redis come from scripts/postgres.sh and scripts/redis.sh.
cluster=(nginx curl openssl)
# Profiling a bench's server (bench/create.sh PERF=1): perf.
profile=(linux-perf)
# Instructions per operation (bench/callgrind.sh): valgrind's callgrind.
callgrind=(valgrind)

want=()
for group in "${@:-build}"; do
  case "$group" in
    build) want+=("${build[@]}") ;;
    test)  want+=("${build[@]}" "${test[@]}") ;;
    bench) want+=("${build[@]}" "${bench[@]}") ;;
    web)   want+=("${web[@]}") ;;
    demo)  want+=("${demo[@]}") ;;
    cluster) want+=("${build[@]}" "${cluster[@]}") ;;
    profile) want+=("${profile[@]}") ;;
    callgrind) want+=("${build[@]}" "${callgrind[@]}") ;;
    *) echo "unknown group: $group" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${want[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "installing: ${missing[*]}"
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
