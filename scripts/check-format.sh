#!/usr/bin/env bash
# The one format: `swift format lint --strict` with the repository's .swift-format, and no line of Swift longer than
# 120 characters (swift-format leaves comments and string literals as they are, so they are counted here).
# `make format` rewrites the tree in this format. Usage: scripts/check-format.sh [ROOT]
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT"
SWIFT=${SWIFT:-swift}
PATHS=(Package.swift Sources Tests Fuzz Examples)
status=0
if ! "$SWIFT" format lint --strict --recursive --parallel "${PATHS[@]}"; then
    echo "check-format: swift format lint failed; 'make format' rewrites the tree" >&2
    status=1
fi
if ! find "${PATHS[@]}" -name '*.swift' -print0 | python3 -c '
import sys
wide = 0
for path in sys.stdin.read().split("\0"):
    if not path:
        continue
    for number, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        if len(line) > 120:
            wide += 1
            print(f"{path}:{number}: {len(line)} characters (at most 120)")
sys.exit(1 if wide else 0)
'; then
    echo "check-format: lines longer than 120 characters" >&2
    status=1
fi
[ $status -eq 0 ] && echo "check-format: ok ($(find "${PATHS[@]}" -name '*.swift' | wc -l) files)"
exit $status
