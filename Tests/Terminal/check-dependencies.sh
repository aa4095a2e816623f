#!/usr/bin/env bash
# scripts/check-dependencies.sh fails (exit 1), naming the target and the module, on tiny fixture packages
# that break each rule, passes on a fixture that keeps them (a C helper inside its wrapper, platform
# conditions honoured), and passes on this package itself.
set -euo pipefail
cd "$(dirname "$0")/../.."
CHECK="$PWD/scripts/check-dependencies.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# fixture NAME TARGET...: a package in $WORK/NAME whose targets are the given PackageDescription expressions,
# on top of a layering that keeps the rules: CLib behind Wrapper (with the C helper CHelper), OpenSSL behind
# EnRouteCrypto, SQLite behind SQLiteClient (Linux only), and client targets that use them as allowed.
fixture() {
  local dir="$WORK/$1"; shift
  mkdir -p "$dir/Sources/CHelper/include" "$dir/Sources/Wrapper"
  echo 'int chelper(void) { return 0; }' > "$dir/Sources/CHelper/helper.c"
  echo 'int chelper(void);' > "$dir/Sources/CHelper/include/chelper.h"
  echo 'public let wrapped = 1' > "$dir/Sources/Wrapper/Wrapper.swift"
  {
    echo '// swift-tools-version:6.0'
    echo 'import PackageDescription'
    echo 'let package = Package(name: "Fixture", targets: ['
    echo '  .systemLibrary(name: "CLib"), .systemLibrary(name: "COpenSSL"), .systemLibrary(name: "CSQLite"),'
    echo '  .target(name: "CHelper", dependencies: ["CLib"]),'
    echo '  .target(name: "Wrapper", dependencies: ["CLib", "CHelper"]),'
    echo '  .target(name: "EnRouteCrypto", dependencies: ["COpenSSL"]),'
    echo '  .target(name: "SQLiteClient", dependencies: [.target(name: "CSQLite", condition: .when(platforms: [.linux]))]),'
    echo '  .target(name: "ClientKit"),'
    echo '  .target(name: "ProviderKit", dependencies: ["ClientKit", "SQLiteClient"]),'
    echo '  .target(name: "NotificationsKit", dependencies: [.target(name: "EnRouteCrypto", condition: .when(platforms: [.linux]))]),'
    echo '  .target(name: "EnRouteServer", dependencies: ["Wrapper", "EnRouteCrypto", "SQLiteClient"]),'
    printf '  %s,\n' "$@"
    echo '])'
  } > "$dir/Package.swift"
}

run() {   # run DIR: the check's exit status in $rc, its output in $WORK/out.txt
  set +e; "$CHECK" "$1" > "$WORK/out.txt" 2>&1; rc=$?; set -e
}

expect_pass() {   # expect_pass DIR MESSAGE...
  run "$1"; shift
  if [ "$rc" -ne 0 ]; then echo "FAIL: the check refused a package that keeps the rules (exit $rc)"; cat "$WORK/out.txt"; exit 1; fi
  for message in "$@"; do
    grep -qF -- "$message" "$WORK/out.txt" || { echo "FAIL: the check did not say: $message"; cat "$WORK/out.txt"; exit 1; }
  done
  echo "ok: passes, $*"
}

expect_fail() {   # expect_fail DIR MESSAGE [NOT-MESSAGE]
  run "$1"
  if [ "$rc" -ne 1 ]; then echo "FAIL: the check exited $rc on $1, not 1"; cat "$WORK/out.txt"; exit 1; fi
  grep -qF -- "$2" "$WORK/out.txt" || { echo "FAIL: the check did not say: $2"; cat "$WORK/out.txt"; exit 1; }
  if [ -n "${3:-}" ] && grep -qF -- "$3" "$WORK/out.txt"; then echo "FAIL: the check wrongly said: $3"; cat "$WORK/out.txt"; exit 1; fi
  echo "ok: fails, $2"
}

fixture layered '.executableTarget(name: "enroute", dependencies: ["EnRouteServer", "ProviderKit", "NotificationsKit"])'
expect_pass "$WORK/layered" "CHelper, CLib -> Wrapper" "COpenSSL -> EnRouteCrypto" "CSQLite -> SQLiteClient"

fixture second-user '.target(name: "Tool", dependencies: ["CLib"])'
expect_fail "$WORK/second-user" "C module CHelper, CLib is depended on directly by 2 Swift targets (Tool -> CLib; Wrapper -> CHelper, CLib)"

fixture helper-user '.target(name: "Tool", dependencies: ["CHelper"])'
expect_fail "$WORK/helper-user" "(Tool -> CHelper; Wrapper -> CHelper, CLib)"

fixture test-user '.testTarget(name: "ToolTests", dependencies: ["COpenSSL"])'
expect_fail "$WORK/test-user" "C module COpenSSL is depended on directly by 2 Swift targets (EnRouteCrypto -> COpenSSL; ToolTests -> COpenSSL)"

# NotificationsKit links EnRouteCrypto on Linux only (allowed); RideHailing links it everywhere.
fixture client-openssl '.target(name: "RideHailing", dependencies: ["ClientKit", "EnRouteCrypto"])'
expect_fail "$WORK/client-openssl" \
  "client target RideHailing depends on C module COpenSSL on iOS (RideHailing -> EnRouteCrypto -> COpenSSL)" "NotificationsKit"

fixture client-ios-condition '.target(name: "AppleAdapters", dependencies: [.target(name: "EnRouteCrypto", condition: .when(platforms: [.iOS, .macOS]))])'
expect_fail "$WORK/client-ios-condition" "client target AppleAdapters depends on C module COpenSSL on iOS (AppleAdapters -> EnRouteCrypto -> COpenSSL)"

fixture client-c-helper '.target(name: "OrderTracking", dependencies: ["ClientKit", "Wrapper"])'
expect_fail "$WORK/client-c-helper" "client target OrderTracking depends on C module CHelper on iOS (OrderTracking -> Wrapper -> CHelper)"

# A server module is refused on any platform, even behind a Linux-only condition.
fixture client-server '.target(name: "OrderTracking", dependencies: [.target(name: "EnRouteServer", condition: .when(platforms: [.linux]))])'
expect_fail "$WORK/client-server" "client target OrderTracking depends on server module EnRouteServer (OrderTracking -> EnRouteServer)"

fixture client-server-transitive \
  '.target(name: "TestSupport", dependencies: ["ClientKit"])' \
  '.target(name: "OrderTracking", dependencies: ["ClientKit", "TestSupport"])' \
  '.target(name: "RideHailing", dependencies: ["OrderTracking"])'
expect_fail "$WORK/client-server-transitive" "client target RideHailing depends on server module TestSupport (RideHailing -> OrderTracking -> TestSupport)"

# The domain depends on no HTTP, storage or wiring; libraries do not depend on the composition root.
fixture domain-http '.target(name: "HTTPEngine", dependencies: ["Wrapper"])' '.target(name: "EnRouteDomain", dependencies: ["HTTPEngine"])'
expect_fail "$WORK/domain-http" "domain module EnRouteDomain depends on HTTPEngine (EnRouteDomain -> HTTPEngine)"

fixture domain-storage-transitive '.target(name: "EnRouteSQLite", dependencies: ["SQLiteClient"])' \
  '.target(name: "EnRouteDomain")' '.target(name: "EnRouteNotifications", dependencies: ["EnRouteDomain", "EnRouteSQLite"])'
expect_fail "$WORK/domain-storage-transitive" "domain module EnRouteNotifications depends on EnRouteSQLite (EnRouteNotifications -> EnRouteSQLite)"

fixture library-root '.target(name: "EnRouteBackend", dependencies: ["EnRouteServer"])' '.target(name: "EnRouteAPI", dependencies: ["EnRouteBackend"])'
expect_fail "$WORK/library-root" "library EnRouteAPI depends on the composition root EnRouteBackend"

# Server modules use the client side's transport and nothing else of it, directly or through another module.
fixture server-transport '.target(name: "HTTPTransport")' \
  '.target(name: "EnRouteStripe", dependencies: ["HTTPTransport"])' \
  '.target(name: "CurlTransport", dependencies: ["Wrapper", "HTTPTransport"])' \
  '.target(name: "EnRouteAPNs", dependencies: ["CurlTransport"])' \
  '.target(name: "TestSupport", dependencies: ["ClientKit", "EnRouteStripe"])' \
  '.executableTarget(name: "enroute", dependencies: ["EnRouteStripe", "ClientKit"])'
expect_pass "$WORK/server-transport" "server modules use no client module but HTTPTransport"

fixture server-client '.target(name: "HTTPTransport")' '.target(name: "EnRouteStripe", dependencies: ["ClientKit"])'
expect_fail "$WORK/server-client" \
  "server module EnRouteStripe depends on client module ClientKit (EnRouteStripe -> ClientKit)"

fixture server-client-transitive '.target(name: "CurlTransport", dependencies: ["Wrapper", "ClientKit"])' \
  '.target(name: "EnRouteAPNs", dependencies: ["CurlTransport"])'
expect_fail "$WORK/server-client-transitive" \
  "server module EnRouteAPNs depends on client module ClientKit (EnRouteAPNs -> CurlTransport -> ClientKit)"

fixture server-view-models '.target(name: "OrderTracking", dependencies: ["ClientKit"])' \
  '.target(name: "EnRouteAPI", dependencies: ["OrderTracking"])'
expect_fail "$WORK/server-view-models" \
  "server module EnRouteAPI depends on client module OrderTracking (EnRouteAPI -> OrderTracking)"

# The one allowed edge (the share page's wording policy) covers that edge alone.
fixture server-allowed '.target(name: "OrderTracking", dependencies: ["ClientKit"])' \
  '.target(name: "EnRouteWeb", dependencies: ["OrderTracking"])' \
  '.target(name: "EnRouteBackend", dependencies: ["EnRouteWeb"])'
expect_pass "$WORK/server-allowed" "(allowed: EnRouteWeb -> OrderTracking)"
fixture server-allowed-other '.target(name: "OrderTracking", dependencies: ["ClientKit"])' \
  '.target(name: "EnRouteWeb", dependencies: ["OrderTracking", "ClientKit"])'
expect_fail "$WORK/server-allowed-other" \
  "server module EnRouteWeb depends on client module ClientKit (EnRouteWeb -> ClientKit)"

# The README's module map must list every Swift target with exactly its direct dependencies.
fixture readme '.executableTarget(name: "enroute", dependencies: ["EnRouteServer", "ProviderKit"])'
mkdir -p "$WORK/readme/Sources/ClientKit"
{
  echo '# Fixture'; echo; echo '## Module map'; echo
  echo '| module | depends on | job |'; echo '| --- | --- | --- |'
  for t in Wrapper:'`CLib`, `CHelper`' EnRouteCrypto:'`COpenSSL`' SQLiteClient:'`CSQLite`' ClientKit:'' ProviderKit:'`ClientKit`, `SQLiteClient`' \
           NotificationsKit:'`EnRouteCrypto`' EnRouteServer:'`Wrapper`, `EnRouteCrypto`' enroute:'`EnRouteServer`, `ProviderKit`'; do
    echo "| \`${t%%:*}\` | ${t#*:} | x |"
  done
  echo; echo 'See `Sources/ClientKit/Gone.swift`.'
  echo; echo '## Next'
} > "$WORK/readme/README.md"
expect_fail "$WORK/readme" "README module map row EnRouteServer says it depends on EnRouteCrypto, Wrapper; Package.swift says EnRouteCrypto, SQLiteClient, Wrapper"
expect_fail "$WORK/readme" "README names Sources/ClientKit/Gone.swift, which does not exist"
sed -i "s/| \`ClientKit\` |/| \`Nope\` |/" "$WORK/readme/README.md"
expect_fail "$WORK/readme" "README module map has no row for target ClientKit"
expect_fail "$WORK/readme" "README module map names Nope, which is not a Swift target in Package.swift"

expect_pass "$PWD" "CSQLite -> SQLiteClient" "COpenSSL -> EnRouteCrypto" "CEpoll -> HTTPEngine" "CCurl -> CurlTransport" \
  "server modules use no client module but HTTPTransport (allowed: EnRouteWeb -> OrderTracking)"
echo "passed"
