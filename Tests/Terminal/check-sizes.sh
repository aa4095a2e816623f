#!/usr/bin/env bash
# scripts/check-sizes.sh fails (exit 1), naming the file and the function, on fixture trees with a file over 500
# lines, a function or an initializer over 80, an exception without a reason and an exception no longer needed; it
# passes on a fixture within the limits (braces in strings and comments do not count), on a listed exception, and on
# this repository.
set -euo pipefail
cd "$(dirname "$0")/../.."
CHECK="$PWD/scripts/check-sizes.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# body N: N lines of a function body.
body() { for ((i = 0; i < $1; i++)); do echo "        total += $i"; done; }

# tree NAME: an empty fixture repository in $WORK/NAME with a Sources folder.
tree() { mkdir -p "$WORK/$1/Sources/M" "$WORK/$1/scripts"; echo "$WORK/$1"; }

run() {   # run DIR: the check's exit status in $rc, its output in $WORK/out.txt
  set +e; "$CHECK" "$1" > "$WORK/out.txt" 2>&1; rc=$?; set -e
}

expect_fail() {   # expect_fail DIR TEXT
  run "$1"
  if [[ $rc -ne 1 ]] || ! grep -qF "$2" "$WORK/out.txt"; then
    echo "FAIL: expected exit 1 naming '$2', got $rc:"; cat "$WORK/out.txt"; exit 1
  fi
}

expect_pass() {
  run "$1"
  if [[ $rc -ne 0 ]]; then echo "FAIL: expected a pass, got $rc:"; cat "$WORK/out.txt"; exit 1; fi
}

ok=$(tree ok)
{
  echo 'struct S {'
  echo '    func short() -> Int {'
  echo '        var total = 0'
  echo '        let text = "}}}}"  // }}}'
  body 70
  echo '        return total'
  echo '    }'
  echo '}'
} > "$ok/Sources/M/Short.swift"
expect_pass "$ok"

long_function=$(tree long-function)
{ echo 'func long() -> Int {'; echo '    var total = 0'; body 80; echo '    return total'; echo '}'; } \
  > "$long_function/Sources/M/Long.swift"
expect_fail "$long_function" "Sources/M/Long.swift:1: long is 84 lines (at most 80)"

long_init=$(tree long-init)
{ echo 'struct S {'; echo '    init() {'; echo '        var total = 0'; body 80; echo '    }'; echo '}'; } \
  > "$long_init/Sources/M/Init.swift"
expect_fail "$long_init" "Sources/M/Init.swift:2: init is 83 lines (at most 80)"

long_file=$(tree long-file)
for ((i = 0; i < 501; i++)); do echo "let v$i = $i"; done > "$long_file/Sources/M/Big.swift"
expect_fail "$long_file" "Sources/M/Big.swift: 501 lines (at most 500)"

# The same long function, listed with its reason, passes; listed without one, the list itself is refused.
cp "$long_function/Sources/M/Long.swift" "$ok/Sources/M/Long.swift"
echo 'Sources/M/Long.swift:long # a table whose rows are its content' > "$ok/scripts/size-exceptions.txt"
expect_pass "$ok"
echo 'Sources/M/Long.swift:long' > "$ok/scripts/size-exceptions.txt"
run "$ok"
[[ $rc -eq 2 ]] && grep -qF "gives no reason" "$WORK/out.txt" || { echo "FAIL: a reasonless exception passed"; exit 1; }

# An exception whose function has come under the limit must go.
rm "$ok/Sources/M/Long.swift"
echo 'Sources/M/Long.swift:long # a table' > "$ok/scripts/size-exceptions.txt"
expect_fail "$ok" "'Sources/M/Long.swift:long' is no longer over its limit"

expect_pass "$PWD"
echo "passed"
