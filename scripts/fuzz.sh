#!/usr/bin/env bash
# Builds the coverage-guided fuzz targets (Fuzz/<Target>/) with libFuzzer and AddressSanitizer and runs each one for
# a budget. A target is one Swift file that defines LLVMFuzzerTestOneInput and checks properties of the parser it
# drives; it is compiled against the project's real code: whole modules (built here once, instrumented, with
# testing enabled so the target can reach internal API) and, where a module is too large to build for one file, the
# parser's own source files compiled into the target.
#
# Everything goes to .build/fuzz: modules/ (the instrumented modules), bin/ (one binary per target), corpus/<Target>
# (what a run found, beside the seeds in Fuzz/<Target>/corpus, which a run never writes), artifacts/<Target> (a crash
# or a property failure: the input that caused it) and logs/<Target>.log.
#
# Usage: scripts/fuzz.sh [--budget SECONDS] [--jobs N] [--build-only] [--list] [Target...]
#   --budget   seconds per target (FUZZ_SECONDS, else 15)
#   --jobs     targets run at once (default: the number of cores)
# With no targets named, every one runs. Exits non-zero when a target fails to build or finds anything.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/.build/fuzz
SWIFTC=${SWIFTC:-swiftc}
budget=${FUZZ_SECONDS:-15}
jobs=$(nproc)
build_only=0
list=0
names=()
while [ $# -gt 0 ]; do
    case $1 in
        --budget) budget=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --build-only) build_only=1; shift ;;
        --list) list=1; shift ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "fuzz.sh: unknown option $1" >&2; exit 64 ;;
        *) names+=("$1"); shift ;;
    esac
done

# Each target: the project modules it imports (in dependency order) and any source files compiled into it.
declare -A MODULES SOURCES
MODULES[Base64JWT]="EnRouteCrypto"
MODULES[HTTPHead]="EnRouteModels EnRouteCrypto EnRouteLogging HTTPEngine"
MODULES[HTTPChunked]="EnRouteModels EnRouteCrypto EnRouteLogging HTTPEngine"
MODULES[WebSocketFrames]="EnRouteModels EnRouteCrypto EnRouteLogging HTTPEngine"
MODULES[SSE]="EnRouteModels HTTPTransport"
MODULES[RESP]="RedisClient"
MODULES[Polyline]="EnRouteModels"
MODULES[PostgresValues]="PostgresClient"
MODULES[OSMPBF]="OSMPBF"
MODULES[CitiesGeoJSON]="EnRouteModels EnRouteLogging EnRouteDomain"
MODULES[OSRMQuery]="EnRouteModels EnRouteCrypto EnRouteLogging HTTPEngine"
SOURCES[OSRMQuery]="Sources/EnRouteAPI/OSRMQuery.swift"
MODULES[LocationBatch]="EnRouteModels EnRouteCrypto EnRouteLogging HTTPEngine"
SOURCES[LocationBatch]="Sources/EnRouteAPI/LocationBatchJSON.swift"
TARGETS=(Base64JWT HTTPHead HTTPChunked WebSocketFrames SSE RESP Polyline PostgresValues OSMPBF CitiesGeoJSON OSRMQuery
         LocationBatch)

if [ $list -eq 1 ]; then printf '%s\n' "${TARGETS[@]}"; exit 0; fi
[ ${#names[@]} -eq 0 ] && names=("${TARGETS[@]}")
for name in "${names[@]}"; do
    [ -n "${MODULES[$name]+x}" ] || { echo "fuzz.sh: no target '$name' (scripts/fuzz.sh --list)" >&2; exit 64; }
done

# Swift 6 mode with the package's upcoming features; -O so the fuzzer runs at speed, -enable-testing for @testable.
FLAGS=(-swift-version 6 -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault
       -O -sanitize=fuzzer,address -enable-testing -parse-as-library -I "$OUT/modules")
for c in "$ROOT"/Sources/C*/; do FLAGS+=(-I "$c"); done
# The C libraries' headers and libraries where pkg-config finds them (libpq's headers are not in /usr/include).
for flag in $(pkg-config --cflags-only-I --libs-only-L libcrypto zlib libpq); do
    case $flag in -I*) FLAGS+=(-Xcc "$flag") ;; -L*) FLAGS+=("$flag") ;; esac
done
mkdir -p "$OUT/modules" "$OUT/bin" "$OUT/logs"

# The project modules each module imports (Package.swift's dependencies, less the C modules).
declare -A DEPS=([EnRouteModels]="" [EnRouteCrypto]="" [EnRouteLogging]=""
                 [HTTPEngine]="EnRouteModels EnRouteCrypto EnRouteLogging" [HTTPTransport]="EnRouteModels"
                 [RedisClient]="" [PostgresClient]="" [OSMPBF]="" [EnRouteDomain]="EnRouteModels EnRouteLogging")

# The lists above must be Package.swift's: a module that gains a dependency fails here, named, not in its build.
LISTED=$(for m in "${!DEPS[@]}"; do echo "$m=${DEPS[$m]}"; done)
export LISTED
"${SWIFT:-swift}" package --package-path "$ROOT" dump-package | python3 -c '
import json, os, sys
targets = {t["name"]: t for t in json.load(sys.stdin)["targets"]}
wrong = []
for entry in os.environ["LISTED"].splitlines():
    module, _, listed = entry.partition("=")
    deps = [(d.get("byName") or d.get("target"))[0] for d in targets[module]["dependencies"]]
    want = sorted(d for d in deps if targets[d]["type"] != "system")
    if sorted(listed.split()) != want:
        wrong.append(f"{module} imports {want} in Package.swift, {sorted(listed.split())} here")
for line in wrong:
    print("fuzz.sh: DEPS is out of date:", line, file=sys.stderr)
sys.exit(1 if wrong else 0)
' || exit 1

# Builds a module (one object and its .swiftmodule) when a source of it or a module it imports is newer. Its warnings
# are the normal build's business and are not repeated here.
build_module() {
    local module=$1 object=$OUT/modules/$1.o dep
    local newer=("Sources/$module")
    for dep in ${DEPS[$module]}; do newer+=("$OUT/modules/$dep.swiftmodule"); done
    if [ -f "$object" ] && [ -z "$(find "${newer[@]}" -newer "$object" -print -quit)" ]; then return 0; fi
    echo "== building $module (instrumented)"
    "$SWIFTC" "${FLAGS[@]}" -suppress-warnings -module-name "$module" -wmo -c -o "$object" -emit-module \
        -emit-module-path "$OUT/modules/$module.swiftmodule" $(find "Sources/$module" -name '*.swift' | sort)
    # The compiler leaves an output it would write unchanged as it was: mark the build as done now.
    touch "$object"
}

build_target() {
    local name=$1 module objects=() binary=$OUT/bin/$1
    for module in ${MODULES[$name]}; do
        build_module "$module"
        objects+=("$OUT/modules/$module.o")
    done
    local inputs=(Fuzz/Shared/*.swift "Fuzz/$name"/*.swift ${SOURCES[$name]:-})
    if [ -f "$binary" ] && [ -z "$(find "${inputs[@]}" "${objects[@]}" -newer "$binary" -print -quit)" ]; then
        return 0
    fi
    echo "== building fuzz target $name"
    # The gold linker warns once per ASan helper it cannot export; those lines say nothing about the target.
    "$SWIFTC" "${FLAGS[@]}" -module-name "${name}Fuzz" "${inputs[@]}" "${objects[@]}" -o "$binary" 2>&1 \
        | { grep -v "Cannot export local symbol" || true; }
}

for name in "${names[@]}"; do build_target "$name"; done
[ $build_only -eq 1 ] && exit 0

# Runs one target for the budget; prints its last status line and whether it found anything.
run_target() {
    local name=$1 corpus=$OUT/corpus/$1 artifacts=$OUT/artifacts/$1 log=$OUT/logs/$1.log
    mkdir -p "$corpus" "$artifacts"
    local options=(-max_total_time="$budget" -artifact_prefix="$artifacts/" -print_final_stats=1 -timeout=10
                   -rss_limit_mb=2048 -max_len="$(cat "Fuzz/$name/max_len" 2>/dev/null || echo 4096)")
    [ -f "Fuzz/$name/dictionary" ] && options+=(-dict="Fuzz/$name/dictionary")
    # The runtime's own backtracer would hold the output open after a crash; libFuzzer and ASan report instead.
    if SWIFT_BACKTRACE=enable=no "$OUT/bin/$name" "${options[@]}" "$corpus" \
            "Fuzz/$name/corpus" >"$log" 2>&1; then
        local last rate
        last=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -E 's/ (lim|exec\/s|rss|L):.*//')
        rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
        echo "$name: ok, ${rate:-?} exec/s, ${last:-(no status line)}"
    else
        echo "$name: FAILED, input in $artifacts (log: $log)"
        grep -E 'property failed|ERROR:|Fatal error' "$log" | head -3 | sed 's/^/    /'
        echo "    replay: $OUT/bin/$name <input>"
        return 1
    fi
}

echo "== fuzzing ${names[*]} for ${budget} s each, $jobs at a time"
pids=() failed=0
for name in "${names[@]}"; do
    run_target "$name" &
    pids+=($!)
    if [ ${#pids[@]} -ge "$jobs" ]; then
        wait "${pids[0]}" || failed=1
        pids=("${pids[@]:1}")
    fi
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
exit $failed
