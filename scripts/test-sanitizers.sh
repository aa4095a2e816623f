#!/usr/bin/env bash
# Runs the whole test suite under AddressSanitizer (with LeakSanitizer) and then ThreadSanitizer, each in
# its own scratch path (.build-asan, .build-tsan) so the normal debug build is left alone.
#
# Every process the suite starts (the test runner and the real `enroute` binary the durability tests
# spawn) inherits the options and writes its reports to <scratch>/sanitizers/<tool>.<pid>; the script
# counts them, prints a summary and exits non-zero when a test failed or any report is not suppressed.
# Suppressions (libraries' own leaks and races only, each with its reason) are in scripts/sanitizers/.
#
# Usage: scripts/test-sanitizers.sh [asan|tsan]...   (both by default, ASan first)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SWIFT=${SWIFT:-swift}
SUPP=$ROOT/scripts/sanitizers
# The RedisClient tests' server, as `make test` starts it (unless the caller names one).
if [ -z "${ENROUTE_TEST_REDIS_URL:-}" ]; then
    ENROUTE_TEST_REDIS_URL=$(scripts/redis.sh start .build/redis) || { echo "test-sanitizers: Redis did not start" >&2; exit 1; }
    export ENROUTE_TEST_REDIS_URL
fi
tools=("$@")
[ ${#tools[@]} -eq 0 ] && tools=(asan tsan)

summary=()
failed=0

run_one() {
    local tool=$1 sanitize scratch logs env_name options
    case $tool in
        asan) sanitize=address; scratch=.build-asan
              env_name=ASAN_OPTIONS
              options="detect_leaks=1:abort_on_error=0:log_path=$ROOT/$scratch/sanitizers/asan"
              export LSAN_OPTIONS="suppressions=$SUPP/lsan.supp:print_suppressions=1" ;;
        tsan) sanitize=thread; scratch=.build-tsan
              env_name=TSAN_OPTIONS
              # halt_on_error=0: run the whole suite and count every report rather than stop at the first.
              options="suppressions=$SUPP/tsan.supp:halt_on_error=0:second_deadlock_stack=1:log_path=$ROOT/$scratch/sanitizers/tsan" ;;
        *) echo "unknown sanitizer '$tool' (asan or tsan)" >&2; exit 64 ;;
    esac
    logs=$ROOT/$scratch/sanitizers
    echo "== $tool: building (--sanitize=$sanitize --scratch-path $scratch)"
    if ! $SWIFT build --build-tests --sanitize=$sanitize --scratch-path $scratch; then
        summary+=("$tool: BUILD FAILED"); failed=1; return
    fi
    rm -rf "$logs"; mkdir -p "$logs"
    echo "== $tool: testing ($env_name=$options)"
    local status=0
    env "$env_name=$options" $SWIFT test --skip-build --sanitize=$sanitize --scratch-path $scratch 2>&1 | tee "$logs/test-output.txt"
    status=${PIPESTATUS[0]}
    local result tests
    result=$(grep -E "Test run with [0-9]+ tests" "$logs/test-output.txt" | tail -1 | sed 's/^[^A-Za-z]*//')
    [ -n "$result" ] || result="no Swift Testing summary"
    tests="tests: $result"
    local files=("$logs"/$tool.*)
    [ -e "${files[0]}" ] || files=()
    if [ $tool = asan ]; then
        local errors leaks direct indirect bytes suppressed
        errors=$(cat "${files[@]}" /dev/null | grep -c "ERROR: AddressSanitizer")
        leaks=$(cat "${files[@]}" /dev/null | grep -c "ERROR: LeakSanitizer")
        direct=$(cat "${files[@]}" /dev/null | grep -c "^Direct leak")
        indirect=$(cat "${files[@]}" /dev/null | grep -c "^Indirect leak")
        bytes=$(cat "${files[@]}" /dev/null | sed -n 's/^SUMMARY: AddressSanitizer: \([0-9]*\) byte(s) leaked in \([0-9]*\) allocation.*/\1 \2/p' |
                awk '{b+=$1; a+=$2} END {printf "%d bytes in %d allocations", b, a}')
        suppressed=$(cat "${files[@]}" /dev/null | awk '/^Suppressions used:/{on=1; next} on && /^-+$/{on=0} on && $1 ~ /^[0-9]+$/ {n+=$1} END {print n+0}')
        summary+=("asan: $tests; memory errors: $errors; processes with unsuppressed leaks: $leaks ($direct direct, $indirect indirect report(s), $bytes); suppressed leak allocations: $suppressed")
        if [ "$errors" -gt 0 ] || [ "$leaks" -gt 0 ]; then failed=1; fi
    else
        local reports counts races mutex
        reports=$(cat "${files[@]}" /dev/null | grep -c "WARNING: ThreadSanitizer")
        counts=$(python3 "$SUPP/tsan-classify.py" "${files[@]}")
        races=$(echo "$counts" | sed -n '1s/races=\([0-9]*\).*/\1/p')
        mutex=$(echo "$counts" | sed -n '1s/.*mutex=\([0-9]*\)/\1/p')
        summary+=("tsan: $tests; reports: $reports, of which races: $races, Synchronization.Mutex false positives (every access inside a withLock body): $mutex")
        echo "$counts" | tail -n +2 | while read -r line; do echo "  race: $line"; done
        [ "${races:-1}" -gt 0 ] && failed=1
    fi
    # The sanitizers' own exit codes (LeakSanitizer 23, ThreadSanitizer 66) make `swift test` fail even when
    # every report was classified above, so the tests' verdict comes from Swift Testing's summary.
    if ! grep -qE "Test run with [0-9]+ tests .* passed" "$logs/test-output.txt" || grep -q "^✘" "$logs/test-output.txt"; then
        failed=1; summary+=("$tool: TESTS FAILED (swift test exited $status)")
    fi
    [ ${#files[@]} -gt 0 ] && summary+=("$tool: reports in $logs/")
}

for tool in "${tools[@]}"; do run_one "$tool"; done

echo
echo "== sanitizer summary"
for line in "${summary[@]}"; do echo "  $line"; done
if [ $failed -ne 0 ]; then echo "== FAILED"; exit 1; fi
echo "== clean"
