#!/usr/bin/env bash
# Location ingest with the path persisted, in batches of 50, against raw SQLite inserts of the same rows
# into the same table, in one run. Prints fixes/s for each and the ratios (goals: >= 200,000 fixes/s,
# >= 0.5x raw). Every loop is bounded by its count and by SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."
PROVIDERS="${PROVIDERS:-200}"; BATCHES="${BATCHES:-50}"; CONCURRENCY="${CONCURRENCY:-32}"; SECONDS_LIMIT="${SECONDS_LIMIT:-60}"
SCRATCH="${SCRATCH:-.build}"
swift build -c release --scratch-path "$SCRATCH" --product server-bench >/dev/null
BIN="$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)/server-bench"
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
"$BIN" ingest --providers "$PROVIDERS" --batches "$BATCHES" --batch 50 --concurrency "$CONCURRENCY" --seconds "$SECONDS_LIMIT" --dir "$WORK"
