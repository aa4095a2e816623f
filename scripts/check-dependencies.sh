#!/usr/bin/env bash
# Checks the package's module layering from `swift package dump-package` and fails (exit 1) naming the
# offending target and C module when:
#  a) a C module (a system library target, or a target whose sources are C) is depended on directly by
#     more than one Swift target: each C library sits behind exactly one wrapper module. C helper targets
#     that depend on a C module count as part of the same wrapper.
#  b) a client target, evaluated for iOS with dependency conditions honoured, reaches any C module but
#     CSQLite (the iOS SDK has no OpenSSL or curl), or on any platform reaches a module
#     outside the client kit, EnRouteModels, SQLiteClient and EnRouteCrypto. EnRouteCrypto is the Linux
#     side of NotificationsKit's HPKECipher; rule (b)'s iOS check keeps it off Apple platforms.
#  c) the server's layering is broken: the domain modules (EnRouteDomain, EnRouteNotifications) reach HTTP,
#     storage, transports or the composition root, or a library other than the test support depends on
#     the composition root (EnRouteBackend).
#  d) the README's module map (the table under "## Module map") does not list every Swift target but the
#     tests, each with exactly its direct dependencies from Package.swift, or names a source file that is gone.
#  e) a server module reaches a client module other than HTTPTransport (the HTTP client, SSE parser and API
#     requests, which the server's adapters share): no view model is linked into the server. The server modules
#     are every library target but the client ones, CitySimulator (a tool on the client kits) and TestSupport; the
#     shared modules count, since the server links them. Executables are tools and may use the kits. An allowed
#     edge, with its reason, is listed in SERVER_USES_CLIENT and not followed further.
# Prints the C module -> wrapper map. Usage: scripts/check-dependencies.sh [package path, default: repo root]
set -euo pipefail
PKG="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
SWIFT="${SWIFT:-swift}"
DUMP=$(mktemp)
trap 'rm -f "$DUMP"' EXIT
if ! "$SWIFT" package --package-path "$PKG" dump-package > "$DUMP"; then
  echo "check-dependencies: swift package dump-package failed for $PKG" >&2
  exit 2
fi

exec "${PYTHON:-python3}" - "$DUMP" "$PKG" <<'PY'
import json, os, sys

CLIENTS = ["HTTPTransport", "ClientKit", "OrderTracking", "OrderTrackingActivity", "RideHailing", "RideHailingPreviews",
           "ProviderKit", "NotificationsKit", "AppleAdapters"]
# What a client target may depend on, on any platform: the client kit, the shared wire types, SQLite's
# wrapper, and the OpenSSL wrapper that backs NotificationsKit's HPKECipher on Linux only.
CLIENT_MAY_USE = set(CLIENTS) | {"EnRouteModels", "SQLiteClient", "EnRouteCrypto"}
IOS_C_ALLOWED = {"CSQLite"}
# Rule e: the client module every server module may use, the library targets that are not the server's, and the
# server's allowed uses of another client module, each with its reason.
SERVER_MAY_USE_CLIENT = {"HTTPTransport"}
NOT_SERVER = set(CLIENTS) | {"CitySimulator", "TestSupport"}
SERVER_USES_CLIENT = {
    ("EnRouteWeb", "OrderTracking"): "the share page words ETAs and pins with the tracker's own "
                                     "TrackingFreshnessPolicy (pure Foundation), so the page and the app agree",
}
C_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".m", ".mm", ".s", ".S")

dump_path, package = sys.argv[1], sys.argv[2]
with open(dump_path) as f:
    manifest = json.load(f)
targets = {t["name"]: t for t in manifest["targets"]}


def sources_are_c(target):
    """True when the target's sources include C (or C++/Objective-C/assembly) and no Swift."""
    default_root = "Tests" if target["type"] == "test" else "Sources"
    root = os.path.join(package, target.get("path") or os.path.join(default_root, target["name"]))
    roots = [os.path.join(root, s) for s in target.get("sources") or []] or [root]
    excluded = [os.path.normpath(os.path.join(root, e)) for e in target.get("exclude") or []]
    files = []
    for top in roots:
        if os.path.isfile(top):
            files.append(top)
            continue
        for directory, _, names in os.walk(top):
            files += [os.path.join(directory, n) for n in names]
    files = [f for f in files if not any(os.path.normpath(f).startswith(e) for e in excluded)]
    if any(f.endswith(".swift") for f in files):
        return False
    return any(f.endswith(C_SUFFIXES) for f in files)


c_targets = {name for name, t in targets.items() if t["type"] == "system" or sources_are_c(t)}


def edges(name):
    """(dependency, platforms or None for every platform) for each dependency on a target of this package."""
    out = []
    for dependency in targets[name]["dependencies"]:
        for kind in ("byName", "target"):
            if kind in dependency:
                dep_name, condition = dependency[kind][0], dependency[kind][1]
                platforms = (condition or {}).get("platformNames") or None
                if dep_name in targets:
                    out.append((dep_name, platforms))
        # Products come from other packages; the project has none, and they are not its layering.
    return out


failures = []

# a) Each C module behind exactly one Swift module. C targets joined by C-to-C dependencies are one library.
group = {c: c for c in c_targets}
def root(c):
    while group[c] != c:
        c = group[c]
    return c
for c in sorted(c_targets):
    for dep, _ in edges(c):
        if dep in c_targets:
            group[root(c)] = root(dep)
libraries = {}
for c in sorted(c_targets):
    libraries.setdefault(root(c), []).append(c)

print("C module -> wrapper:")
for members in sorted(libraries.values()):
    direct = {}  # Swift dependent -> the members it depends on
    for name in sorted(targets):
        if name in c_targets:
            continue
        for dep, _ in edges(name):
            if dep in members:
                direct.setdefault(name, set()).add(dep)
    wrapper = ", ".join(sorted(direct)) or "(none)"
    print(f"  {', '.join(members)} -> {wrapper}")
    if len(direct) > 1:
        uses = "; ".join(f"{who} -> {', '.join(sorted(what))}" for who, what in sorted(direct.items()))
        failures.append(f"C module {', '.join(members)} is depended on directly by {len(direct)} Swift targets "
                        f"({uses}); exactly one wrapper module may depend on it, the others go through that wrapper")


def reach(start, follow):
    """Every target reachable from `start` along edges `follow` accepts, with the first path found to each."""
    paths, queue = {start: [start]}, [start]
    while queue:
        here = queue.pop(0)
        for dep, platforms in edges(here):
            if dep not in paths and follow(here, dep, platforms):
                paths[dep] = paths[here] + [dep]
                queue.append(dep)
    return paths


# b) Client targets: for iOS only SQLite among C modules; on any platform no module outside the client side.
present = [c for c in CLIENTS if c in targets]
for client in present:
    on_ios = reach(client, lambda here, dep, platforms: platforms is None or "ios" in platforms)
    for dep, path in sorted(on_ios.items()):
        if dep in c_targets and dep not in IOS_C_ALLOWED:
            failures.append(f"client target {client} depends on C module {dep} on iOS ({' -> '.join(path)}); "
                            f"the iOS SDK lacks it, and client targets may use only {', '.join(sorted(IOS_C_ALLOWED))}")
    anywhere = reach(client, lambda here, dep, platforms: dep not in c_targets)
    for dep, path in sorted(anywhere.items()):
        if dep not in CLIENT_MAY_USE:
            failures.append(f"client target {client} depends on server module {dep} ({' -> '.join(path)}); "
                            f"client targets may depend only on {', '.join(sorted(CLIENT_MAY_USE))}")
# c) Dependencies point inward: the domain knows no HTTP, storage, transport or wiring.
DOMAIN = ["EnRouteDomain", "EnRouteNotifications"]
OUTER = {"HTTPEngine", "EnRouteAPI", "EnRouteSQLite", "SQLiteClient", "CurlTransport", "EnRouteAPNs", "EnRouteBackend"}
for inner in [d for d in DOMAIN if d in targets]:
    for dep, path in sorted(reach(inner, lambda here, dep, platforms: True).items()):
        if dep in OUTER:
            failures.append(f"domain module {inner} depends on {dep} ({' -> '.join(path)}); HTTP, storage, transports and "
                            f"the wiring depend on the domain, never the other way")
for name, t in sorted(targets.items()):
    if t["type"] == "regular" and name != "TestSupport" and any(dep == "EnRouteBackend" for dep, _ in edges(name)):
        failures.append(f"library {name} depends on the composition root EnRouteBackend; only executables and tests may")

# d) The README's module map: one row per Swift target (tests aside), its direct dependencies in the second column.
readme = os.path.join(package, "README.md")
if os.path.exists(readme):
    import re
    text = open(readme, encoding="utf-8").read()
    section = text.split("\n## Module map", 1)
    if len(section) == 2:
        rows = {}
        for line in section[1].split("\n## ", 1)[0].splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 3 or not cells[0].startswith("`"):
                continue
            deps = set(re.findall(r"`([^`]+)`", cells[1]))
            for name in re.findall(r"`([^`]+)`", cells[0]):
                rows[name] = deps
        swift_targets = {n for n, t in targets.items() if t["type"] != "test" and n not in c_targets}
        for name in sorted(swift_targets - rows.keys()):
            failures.append(f"README module map has no row for target {name}")
        for name in sorted(rows.keys() - swift_targets):
            failures.append(f"README module map names {name}, which is not a Swift target in Package.swift")
        for name in sorted(rows.keys() & swift_targets):
            actual = {dep for dep, _ in edges(name)}
            if rows[name] != actual:
                failures.append(f"README module map row {name} says it depends on {', '.join(sorted(rows[name])) or 'nothing'}; "
                                f"Package.swift says {', '.join(sorted(actual)) or 'nothing'}")

    for path in sorted(set(re.findall(r"`((?:Sources|Tests|scripts|bench)/[^`]+?\.(?:swift|sh|c|h))`", text))):
        if not os.path.exists(os.path.join(package, path)):
            failures.append(f"README names {path}, which does not exist")

# e) Server modules use no client module but the transport: no view model, no app logic, linked into the server.
servers = sorted(name for name, t in targets.items()
                 if t["type"] == "regular" and name not in c_targets and name not in NOT_SERVER)
for server in servers:
    walk = reach(server, lambda here, dep, platforms: (here, dep) not in SERVER_USES_CLIENT)
    for dep, path in sorted(walk.items()):
        if dep in CLIENTS and dep not in SERVER_MAY_USE_CLIENT:
            failures.append(f"server module {server} depends on client module {dep} ({' -> '.join(path)}); "
                            f"server modules may use only {', '.join(sorted(SERVER_MAY_USE_CLIENT))} of the client "
                            f"side")
allowed = [f"{a} -> {b}" for a, b in sorted(SERVER_USES_CLIENT) if a in targets and b in targets]
print(f"Server modules: {', '.join(servers) or '(none)'}")

missing = [c for c in CLIENTS if c not in targets]
if missing:
    print(f"note: no client target named {', '.join(missing)} in this package")

if failures:
    for failure in failures:
        print(f"check-dependencies: FAIL: {failure}", file=sys.stderr)
    sys.exit(1)
print(f"check-dependencies: ok ({len(libraries)} C libraries each behind one wrapper; "
      f"{len(present)} client targets use no C module but {', '.join(sorted(IOS_C_ALLOWED))} on iOS and no server "
      f"module; "
      f"{len(servers)} server modules use no client module but {', '.join(sorted(SERVER_MAY_USE_CLIENT))}"
      f"{' (allowed: ' + '; '.join(allowed) + ')' if allowed else ''})")
PY
