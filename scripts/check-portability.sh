#!/usr/bin/env bash
# Checks that the client kit's sources would compile for the Apple platforms Package.swift declares, though no
# Apple SDK exists on Linux (the Swift compiler here checks no availability and skips every Apple-only `#if`).
# Fails (exit 1), naming the file, line and rule, when a client target's sources:
#  a) use an API that exists only on Linux outside a Linux-only `#if` branch: `Glibc`, `Musl`, `fdatasync`, epoll,
#     `eventfd`, `accept4`; or `FoundationNetworking` outside `#if canImport(FoundationNetworking)`;
#  b) use an API newer than the declared platforms outside an `if #available` / `guard #available` of that version
#     (`Synchronization`'s `Mutex` and `Atomic`, CoreLocation's iOS 18 update fields and service session, ...),
#     or an iOS-only API outside `#if os(iOS)`;
#  c) mark a public declaration `@available` above the declared platforms (an app on the declared minimum cannot use it;
#     gate the call inside with `#available` instead);
#  d) declare something `public` or `open` that conforms to, takes or returns a type of a module the file imports
#     without `public` (Apple's frameworks and the package's own modules): with InternalImportsByDefault that is a
#     compile error on Apple platforms, in files Linux never compiles.
# Usage: scripts/check-portability.sh [package path, default: repo root]
set -euo pipefail
PKG="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
exec "${PYTHON:-python3}" - "$PKG" <<'PY'
import os, re, sys

CLIENTS = ["HTTPTransport", "ClientKit", "OrderTracking", "OrderTrackingActivity", "RideHailing", "RideHailingPreviews",
           "ProviderKit", "NotificationsKit", "AppleAdapters", "SQLiteClient", "EnRouteModels", "CitySimulator"]
package = sys.argv[1]
manifest = open(os.path.join(package, "Package.swift")).read()


def declared(platform):
    m = re.search(r"\.%s\(\.v(\d+)(?:_(\d+))?\)" % platform, manifest)
    return (int(m.group(1)), int(m.group(2) or 0)) if m else None


MINIMUM = {"iOS": declared("iOS"), "macOS": declared("macOS")}

# Linux-only names (rule a).
LINUX_ONLY = [(re.compile(p), what) for p, what in [
    (r"\bimport\s+Glibc\b|\bGlibc\.", "Glibc"), (r"\bimport\s+Musl\b|\bMusl\.", "Musl"),
    (r"\bfdatasync\s*\(", "fdatasync"), (r"\bepoll_\w+", "epoll"), (r"\beventfd\s*\(", "eventfd"),
    (r"\baccept4\s*\(", "accept4"),
]]
FOUNDATION_NETWORKING = re.compile(r"\bimport\s+FoundationNetworking\b")
# Versioned APIs (rule b): pattern, what, (iOS, macOS) that introduced it.
# A framework name limits the rule to files that import that framework (the kit has fields of the same names).
VERSIONED = [(re.compile(p), what, v, framework) for p, what, v, framework in [
    (r"\bimport\s+Synchronization\b", "Synchronization", ((18, 0), (15, 0)), None),
    (r"\bMutex\s*[<(]", "Synchronization.Mutex", ((18, 0), (15, 0)), None),
    (r"\bAtomic\s*[<(]", "Synchronization.Atomic", ((18, 0), (15, 0)), None),
    (r"\bCLServiceSession\b", "CLServiceSession", ((18, 0), (15, 0)), None),
    (r"\.(authorizationDenied|authorizationDeniedGlobally|authorizationRestricted|locationUnavailable|"
     r"insufficientlyInUse|serviceSessionRequired|accuracyLimited|authorizationRequestInProgress)\b",
     "CLLocationUpdate's iOS 18 fields", ((18, 0), (15, 0)), "CoreLocation"),
    (r"\bpushToStartTokenUpdates\b", "Activity.pushToStartTokenUpdates", ((17, 2), (99, 0)), "ActivityKit"),
]]
IOS_ONLY = [(re.compile(r"\bCLBackgroundActivitySession\b"), "CLBackgroundActivitySession")]

# Rule d: which module a type name belongs to, and which public imports make it public.
APPLE_TYPES = [
    (re.compile(r"\b(View|Scene|App|Binding|Color|Font|Image|Text|ViewModifier|Shape|ScenePhase|Commands)\b"),
     "SwiftUI", {"SwiftUI"}),
    (re.compile(r"\bUN[A-Z][a-z]\w*"), "UserNotifications", {"UserNotifications", "UserNotificationsUI"}),
    (re.compile(r"\bUI[A-Z][a-z]\w*"), "UIKit", {"UIKit"}),
    (re.compile(r"\bCL[A-Z][a-z]\w*"), "CoreLocation", {"CoreLocation", "MapKit"}),
    (re.compile(r"\bMK[A-Z][a-z]\w*|\bMapCameraPosition\b|\bMapContent\b"), "MapKit", {"MapKit"}),
    (re.compile(r"\b(ActivityAttributes|ActivityContent|ActivityAuthorizationInfo|Activity)\b"), "ActivityKit",
     {"ActivityKit"}),
    (re.compile(r"\bNW[A-Z][a-z]\w*"), "Network", {"Network"}),
    (re.compile(r"\b(NSObject|URL|Data|Date|UUID|TimeInterval|Bundle|URLSession)\b"), "Foundation",
     {"Foundation", "SwiftUI", "UIKit", "UserNotifications", "MapKit", "CoreLocation", "ActivityKit"}),
]
PUBLIC_DECL = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:final|nonisolated|override|static|class|required|"
                         r"convenience|mutating)\s+)*(public|open)\s+(?!import\b)")
IMPORT = re.compile(r"^\s*((?:@\w+\s+)*)(public\s+|package\s+|internal\s+|private\s+|fileprivate\s+)?"
                    r"import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)")
AVAILABLE_ATTR = re.compile(r"@available\(([^)]*)\)")
AVAILABLE_CHECK = re.compile(r"#available\(([^)]*)\)")
APPLE_CONDITION = re.compile(r"(?<!!)(canImport\((Darwin|os|SQLite3|UIKit|SwiftUI|AppKit|ActivityKit|MapKit|"
                             r"CoreLocation|UserNotifications|CryptoKit|Security|Network)\)|os\((iOS|macOS|tvOS|"
                             r"watchOS|visionOS)\))")
LINUX_CONDITION = re.compile(r"(?<!!)(canImport\((Glibc|Musl|FoundationNetworking)\)|os\(Linux\))|"
                             r"!\s*canImport\((Darwin|os)\)|!\s*os\((iOS|macOS)\)")


def versions(text):
    """{"iOS": (18, 0), ...} from an availability list."""
    out = {}
    for platform, major, minor in re.findall(r"\b(iOS|macOS)\s+(\d+)(?:\.(\d+))?", text):
        out[platform] = (int(major), int(minor or 0))
    return out


def strip(line, state):
    """The line without comments and string contents; state carries an open block comment."""
    out, i, in_string = [], 0, False
    while i < len(line):
        if state["block"]:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out)
            state["block"], i = False, end + 2
            continue
        if not in_string and line.startswith("//", i):
            break
        if not in_string and line.startswith("/*", i):
            state["block"], i = True, i + 2
            continue
        c = line[i]
        if c == '"' and (i == 0 or line[i - 1] != "\\"):
            in_string = not in_string
            out.append(c)
        elif not in_string:
            out.append(c)
        i += 1
    return "".join(out)


# The package's own public types, by module, for rule d.
own_types = {}
for module in os.listdir(os.path.join(package, "Sources")):
    root = os.path.join(package, "Sources", module)
    for directory, _, names in os.walk(root):
        for name in names:
            if name.endswith(".swift"):
                text = open(os.path.join(directory, name), encoding="utf-8").read()
                for t in re.findall(r"\b(?:public|open)\s+(?:final\s+)?(?:indirect\s+)?"
                                    r"(?:class|struct|enum|protocol|actor|typealias)\s+(\w+)", text):
                    own_types.setdefault(t, module)

failures = []


def check_file(path, module):
    rel = os.path.relpath(path, package)
    imports = {}                      # module -> imported publicly
    frames = []                       # #if frames: [condition, branch]
    scopes = [{}]                     # per brace scope: {"iOS": version, ...} guaranteed there
    pending = None                    # availability that the next '{' opens
    state = {"block": False}
    lines = open(path, encoding="utf-8").read().split("\n")
    for number, raw in enumerate(lines, 1):
        line = strip(raw, state)
        where = "%s:%d" % (rel, number)
        directive = re.match(r"\s*#(if|elseif|else|endif)\b(.*)", line)
        if directive:
            kind, condition = directive.group(1), directive.group(2)
            if kind == "if":
                frames.append([condition, "if"])
            elif kind == "elseif" and frames:
                frames[-1] = [frames[-1][0] + " " + condition, "elseif", condition]
            elif kind == "else" and frames:
                frames[-1][1] = "else"
            elif kind == "endif" and frames:
                frames.pop()
            continue

        def linux_only():
            for frame in frames:
                if frame[1] == "else" and APPLE_CONDITION.search(frame[0]):
                    return True
                current = frame[2] if frame[1] == "elseif" else frame[0]
                if frame[1] != "else" and LINUX_CONDITION.search(current):
                    return True
            return False

        def within(pattern):
            return any(frame[1] != "else" and re.search(pattern, frame[2] if frame[1] == "elseif" else frame[0])
                       for frame in frames)

        guaranteed = {}
        for scope in scopes:
            for platform, version in scope.items():
                guaranteed[platform] = max(guaranteed.get(platform, (0, 0)), version)

        m = IMPORT.match(line)
        if m:
            attributes, access, name = m.group(1) or "", (m.group(2) or "").strip(), m.group(3)
            public = access == "public" or "@_exported" in attributes
            imports[name] = imports.get(name, False) or public
        for pattern, what in LINUX_ONLY:
            if pattern.search(line) and not linux_only():
                failures.append("%s: %s exists only on Linux: put it behind #if canImport(Glibc) "
                                "(or the #else of canImport(Darwin))" % (where, what))
        if FOUNDATION_NETWORKING.search(line) and not within(r"canImport\(FoundationNetworking\)"):
            failures.append("%s: FoundationNetworking exists only on Linux: import it inside "
                            "#if canImport(FoundationNetworking)" % where)
        if not linux_only():
            platforms = ["iOS"] if within(r"os\(iOS\)|canImport\(UIKit\)") else \
                ["macOS"] if within(r"os\(macOS\)|canImport\(AppKit\)") else ["iOS", "macOS"]
            for pattern, what, (ios, macos), framework in VERSIONED:
                if not pattern.search(line) or (framework and framework not in imports):
                    continue
                for platform, needed in (("iOS", ios), ("macOS", macos)):
                    if platform not in platforms:
                        continue
                    minimum = MINIMUM.get(platform)
                    if minimum and needed > minimum and guaranteed.get(platform, minimum) < needed:
                        failures.append("%s: %s needs %s %d.%d, above the declared %s %d.%d: gate it with "
                                        "#available or use the kit's own type" % (
                                            where, what, platform, needed[0], needed[1], platform, *minimum))
            for pattern, what in IOS_ONLY:
                if pattern.search(line) and not within(r"os\(iOS\)"):
                    failures.append("%s: %s exists on iOS only (not macOS): put it inside #if os(iOS)" % (where, what))
        for attribute in AVAILABLE_ATTR.findall(line):
            pending = versions(attribute)             # the declaration's body may use what it requires
            public = PUBLIC_DECL.match(line) or (number < len(lines) and PUBLIC_DECL.match(lines[number]))
            for platform, version in versions(attribute).items():
                minimum = MINIMUM.get(platform)
                if public and minimum and version > minimum:
                    failures.append("%s: @available(%s %d.%d) is above the declared %s %d.%d: an app on the "
                                    "declared minimum cannot use it; check #available inside instead" % (
                                        where, platform, version[0], version[1], platform, *minimum))
        check = AVAILABLE_CHECK.search(line)
        if check:
            if re.search(r"\bguard\b", line):
                scopes[-1].update(versions(check.group(1)))
            else:
                pending = versions(check.group(1))
        if PUBLIC_DECL.match(line) and not linux_only():
            signature = line
            j = number
            while signature.count("(") > signature.count(")") and j < len(lines):
                signature += " " + strip(lines[j], {"block": False})
                j += 1
            signature = signature.split("{")[0].split("=")[0] if not re.search(r"\bvar\b.*\{\s*$", line) \
                else signature.split("{")[0]
            for pattern, owner, providers in APPLE_TYPES:
                if pattern.search(signature) and any(p in imports for p in providers) and \
                        not any(imports.get(p) for p in providers):
                    failures.append("%s: a public declaration uses %s's %s, but the file imports %s without "
                                    "public" % (where, owner, pattern.search(signature).group(0), owner))
            for word in set(re.findall(r"\b[A-Z]\w*", signature)):
                owner = own_types.get(word)
                if owner and owner != module and owner in imports and not imports[owner]:
                    failures.append("%s: a public declaration uses %s's %s, but the file imports %s without "
                                    "public" % (where, owner, word, owner))
        for c in line:
            if c == "{":
                scopes.append(pending or {})
                pending = None
            elif c == "}" and len(scopes) > 1:
                scopes.pop()


count = 0
for module in CLIENTS:
    root = os.path.join(package, "Sources", module)
    for directory, _, names in os.walk(root):
        for name in sorted(names):
            if name.endswith(".swift"):
                count += 1
                check_file(os.path.join(directory, name), module)

if failures:
    print("check-portability: %d problem(s) for iOS %d.%d / macOS %d.%d:" % (
        len(failures), *MINIMUM["iOS"], *MINIMUM["macOS"]))
    for failure in failures:
        print("  " + failure)
    sys.exit(1)
print("check-portability: ok (%d client files for iOS %d.%d / macOS %d.%d)" % (
    count, *MINIMUM["iOS"], *MINIMUM["macOS"]))
PY
