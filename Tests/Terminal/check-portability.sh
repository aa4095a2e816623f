#!/usr/bin/env bash
# scripts/check-portability.sh fails (exit 1), naming the file and the rule, on a fixture client file that breaks
# each rule, passes on the same code written portably, and passes on this package itself.
set -euo pipefail
cd "$(dirname "$0")/../.."
CHECK="$PWD/scripts/check-portability.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failed=0

# fixture NAME MODULE: a package declaring iOS 17 / macOS 14 whose client module MODULE holds standard input as
# its one file, beside a ProviderKit with a public type.
fixture() {
  local dir="$WORK/$1"
  mkdir -p "$dir/Sources/$2" "$dir/Sources/ProviderKit"
  printf '%s\n' '// swift-tools-version:6.0' 'import PackageDescription' \
    'let package = Package(name: "Fixture", platforms: [.macOS(.v14), .iOS(.v17)], targets: [])' > "$dir/Package.swift"
  echo 'public final class PointBuffer {}' > "$dir/Sources/ProviderKit/PointBuffer.swift"
  cat > "$dir/Sources/$2/File.swift"
}

# expect NAME STATUS TEXT: the check on fixture NAME exits STATUS and, when failing, says TEXT.
expect() {
  set +e; "$CHECK" "$WORK/$1" > "$WORK/out.txt" 2>&1; local rc=$?; set -e
  if [ "$rc" -ne "$2" ] || ! grep -qF -- "$3" "$WORK/out.txt"; then
    echo "FAIL $1: expected exit $2 and \"$3\", got exit $rc:"; sed 's/^/    /' "$WORK/out.txt"; failed=$((failed + 1))
  else
    echo "ok   $1"
  fi
}

fixture glibc SQLiteClient <<'SWIFT'
import Glibc
func sync(_ fd: Int32) -> Bool { fdatasync(fd) == 0 }
SWIFT
expect glibc 1 "Sources/SQLiteClient/File.swift:1: Glibc exists only on Linux"
grep -qF "File.swift:2: fdatasync exists only on Linux" "$WORK/out.txt" || { echo "FAIL glibc: fdatasync"; failed=1; }

fixture glibc-guarded SQLiteClient <<'SWIFT'
#if canImport(Darwin)
import Darwin
func sync(_ fd: Int32) -> Bool { fcntl(fd, F_FULLFSYNC) == 0 }
#else
import Glibc
func sync(_ fd: Int32) -> Bool { fdatasync(fd) == 0 }
#endif
SWIFT
expect glibc-guarded 0 "check-portability: ok"

fixture networking ClientKit <<'SWIFT'
import Foundation
import FoundationNetworking
SWIFT
expect networking 1 "File.swift:2: FoundationNetworking exists only on Linux"

# The transport is client code too: the apps link it.
fixture networking-transport HTTPTransport <<'SWIFT'
public import FoundationNetworking
SWIFT
expect networking-transport 1 "Sources/HTTPTransport/File.swift:1: FoundationNetworking exists only on Linux"

fixture networking-guarded ClientKit <<'SWIFT'
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
SWIFT
expect networking-guarded 0 "check-portability: ok"

fixture mutex OrderTracking <<'SWIFT'
import Synchronization
final class Box: Sendable { let value = Mutex<Int>(0) }
SWIFT
expect mutex 1 "File.swift:2: Synchronization.Mutex needs iOS 18.0, above the declared iOS 17.0"

fixture mutex-available OrderTracking <<'SWIFT'
func count() {
    if #available(iOS 18, macOS 15, *) {
        let value = Mutex<Int>(0)
        value.withLock { $0 += 1 }
    }
}
SWIFT
expect mutex-available 0 "check-portability: ok"

fixture location-fields AppleAdapters <<'SWIFT'
import CoreLocation
func denied(_ update: CLLocationUpdate) -> Bool { update.authorizationDenied }
SWIFT
expect location-fields 1 "CLLocationUpdate's iOS 18 fields needs iOS 18.0"

fixture available-attribute RideHailing <<'SWIFT'
@available(iOS 18.0, macOS 15.0, *)
public func newer() {}
SWIFT
expect available-attribute 1 "File.swift:1: @available(iOS 18.0) is above the declared iOS 17.0"

fixture background-session AppleAdapters <<'SWIFT'
#if canImport(CoreLocation)
import CoreLocation
let session = CLBackgroundActivitySession()
#endif
SWIFT
expect background-session 1 "CLBackgroundActivitySession exists on iOS only (not macOS)"

fixture background-session-ios AppleAdapters <<'SWIFT'
#if os(iOS)
import CoreLocation
let session = CLBackgroundActivitySession()
#endif
SWIFT
expect background-session-ios 0 "check-portability: ok"

fixture internal-swiftui AppleAdapters <<'SWIFT'
#if canImport(SwiftUI)
import SwiftUI
public struct Card: View {
    public var body: some View { Text("Hi") }
}
#endif
SWIFT
expect internal-swiftui 1 "File.swift:3: a public declaration uses SwiftUI's View, but the file imports SwiftUI without public"

fixture public-swiftui AppleAdapters <<'SWIFT'
#if canImport(SwiftUI)
public import SwiftUI
public struct Card: View {
    public var body: some View { Text("Hi") }
}
#endif
SWIFT
expect public-swiftui 0 "check-portability: ok"

fixture internal-extension AppleAdapters <<'SWIFT'
#if canImport(UserNotifications)
@preconcurrency import UserNotifications
open class Service: UNNotificationServiceExtension {}
#endif
SWIFT
expect internal-extension 1 "uses UserNotifications's UNNotificationServiceExtension"

fixture internal-package-module AppleAdapters <<'SWIFT'
#if canImport(SwiftUI)
import ProviderKit
public final class Location {
    public init(buffer: PointBuffer) {}
}
#endif
SWIFT
expect internal-package-module 1 "File.swift:4: a public declaration uses ProviderKit's PointBuffer"

"$CHECK" > "$WORK/out.txt" 2>&1 || { echo "FAIL the package itself:"; cat "$WORK/out.txt"; failed=$((failed + 1)); }
grep -q "check-portability: ok" "$WORK/out.txt" && echo "ok   the package itself"

[ "$failed" -eq 0 ] || { echo "check-portability tests: $failed failed"; exit 1; }
