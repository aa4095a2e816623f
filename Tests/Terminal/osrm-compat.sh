#!/usr/bin/env bash
# EnRoute's OSRM-compatible API answers in OSRM's shapes: osrm-routed and `enroute serve --graph` are built from
# the same extract (data/osm/Helsinki-clean.osm.pbf) and asked the same 50 seeded pairs (route with steps,
# polyline6 and the full overview; table; nearest) and the same refusals (NoSegment far away, InvalidUrl,
# InvalidQuery, InvalidValue, InvalidOptions, TooBig). Every answer must have the same keys and JSON types at
# every level and the same code; durations are not compared; distances within 5% are counted and reported.
# Then `enroute serve --router osrm --osrm-url` in front of the same osrm-routed must answer /route/v1 as OSRM does.
# Installs OSRM itself (scripts/install-osrm.sh: osrm-bindings from PyPI, Python 3.12).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BIN="${ENROUTE_BIN:-$(swift build --show-bin-path)/enroute}"
OSRM=$(scripts/install-osrm.sh | tail -n 1)
# The folder of OSRM's tools, whether the install script printed it or the virtualenv holding the package.
[ -x "$OSRM/osrm-extract" ] || OSRM=$("$OSRM/bin/python" -c 'import osrm, os; print(os.path.join(os.path.dirname(osrm.__file__), "bin"))')
WORK=$(mktemp -d)
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_http() {   # wait_http URL LOG: polls until the server answers (bounded: 30 s), or shows its log and fails.
  for _ in $(seq 1 300); do
    if curl -s -o /dev/null "$1"; then return 0; fi
    sleep 0.1
  done
  echo "FAIL: nothing answers at $1"; cat "$2"; exit 1
}

cp data/osm/Helsinki-clean.osm.pbf "$WORK/helsinki.osm.pbf"
( cd "$WORK" && "$OSRM/osrm-extract" -p "$OSRM/../share/profiles/car.lua" --small-component-size 50 helsinki.osm.pbf > extract.log 2>&1 \
  && "$OSRM/osrm-contract" helsinki.osrm > contract.log 2>&1 ) || { echo "FAIL: OSRM could not build the graph"; tail "$WORK"/*.log; exit 1; }
"$BIN" graph build --osm data/osm/Helsinki-clean.osm.pbf --out "$WORK/helsinki.graph" > "$WORK/graph.log" 2>&1

OSRM_PORT=$(free_port)
"$OSRM/osrm-routed" -i 127.0.0.1 -p "$OSRM_PORT" "$WORK/helsinki.osrm" > "$WORK/routed.log" 2>&1 &
PIDS+=($!)
ENROUTE_PORT=$(free_port)
"$BIN" serve --port "$ENROUTE_PORT" --db "$WORK/a.sqlite" --graph "$WORK/helsinki.graph" > "$WORK/serve.log" 2>&1 &
PIDS+=($!)
PROXY_PORT=$(free_port)
"$BIN" serve --port "$PROXY_PORT" --db "$WORK/b.sqlite" --router osrm --osrm-url "http://127.0.0.1:$OSRM_PORT" > "$WORK/proxy.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$OSRM_PORT/nearest/v1/driving/24.94,60.17" "$WORK/routed.log"
wait_http "http://127.0.0.1:$ENROUTE_PORT/healthz" "$WORK/serve.log"
wait_http "http://127.0.0.1:$PROXY_PORT/healthz" "$WORK/proxy.log"

python3 - "http://127.0.0.1:$OSRM_PORT" "http://127.0.0.1:$ENROUTE_PORT" "http://127.0.0.1:$PROXY_PORT" <<'PY'
import json, random, sys, urllib.request, urllib.error
osrm, enroute, proxy = sys.argv[1:4]

def get(base, path):
    try:
        with urllib.request.urlopen(base + path, timeout=20) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())

# Keys OSRM gives only sometimes (by road data, maneuver or side of the street): allowed on either side alone.
OPTIONAL = {"modifier", "in", "out", "classes", "lanes", "ref", "destinations", "exits", "rotary_name", "pronunciation",
            "rotary_pronunciation", "exit", "annotation"}

def kind(v):
    if isinstance(v, bool): return "boolean"
    if isinstance(v, (int, float)): return "number"
    if v is None: return "null"
    return {str: "string", list: "array", dict: "object"}[type(v)]

def compare(a, b, where, problems, nullable=False):
    ka, kb = kind(a), kind(b)
    if ka != kb:
        if nullable and "null" in (ka, kb): return
        problems.append(f"{where}: OSRM has {ka}, EnRoute {kb}"); return
    if ka == "object":
        for key in sorted(set(a) | set(b)):
            if key in a and key in b:
                compare(a[key], b[key], f"{where}.{key}", problems, nullable or key in ("durations", "distances"))
            elif key not in OPTIONAL:
                problems.append(f"{where}: key {key!r} only in {'OSRM' if key in a else 'EnRoute'}")
    elif ka == "array":
        # Lengths differ with the route (steps, intersections, points); every element must match the other side's shape.
        if a and b:
            for i, x in enumerate(a): compare(x, b[min(i, len(b) - 1)], f"{where}[{i}]", problems, nullable)
            for i, y in enumerate(b[len(a):]): compare(a[-1], y, f"{where}[{len(a) + i}]", problems, nullable)

def coords(*ps): return ";".join(f"{lng},{lat}" for lng, lat in ps)
# Seeded pairs of points on roads (a random point in the extract, moved onto the road OSRM snaps it to when that is
# within 25 m) that OSRM can route between: OSRM snaps without a limit and its graph lacks some of EnRoute's
# connections, so points off the roads or pairs OSRM cannot join say nothing about the shapes.
rng = random.Random(12)
def point():
    while True:
        lng, lat = round(rng.uniform(24.936, 24.952), 6), round(rng.uniform(60.165, 60.178), 6)
        status, answer = get(osrm, f"/nearest/v1/driving/{lng},{lat}")
        if status == 200 and answer["waypoints"][0]["distance"] < 25:
            return tuple(answer["waypoints"][0]["location"])
pairs, unroutable = [], 0
while len(pairs) < 50:
    p, q = point(), point()
    if get(osrm, f"/route/v1/driving/{coords(p, q)}?overview=false")[1]["code"] == "Ok": pairs.append((p, q))
    else: unroutable += 1
print(f"50 seeded pairs on roads that OSRM routes ({unroutable} pairs OSRM could not route were drawn and skipped)")

problems, within, outside, checked = [], 0, [], 0
def check(path, label):
    global checked
    (sa, a), (sb, b) = get(osrm, path), get(enroute, path)
    checked += 1
    if sa != sb or a.get("code") != b.get("code"):
        problems.append(f"{label} {path}: OSRM {sa} {a.get('code')} ({a.get('message', '')}), EnRoute {sb} {b.get('code')} ({b.get('message', '')})")
        return None, None
    compare(a, b, label, problems)
    return a, b

for i, (p, q) in enumerate(pairs):
    a, b = check(f"/route/v1/driving/{coords(p, q)}?steps=true&geometries=polyline6&overview=full", f"route[{i}]")
    if a and a["code"] == "Ok":
        da, db = a["routes"][0]["distance"], b["routes"][0]["distance"]
        if abs(da - db) <= 0.05 * max(da, 1): within += 1
        else: outside.append((i, da, db))
    check(f"/route/v1/driving/{coords(p, q)}?geometries=geojson&overview=simplified", f"route-geojson[{i}]")
    check(f"/nearest/v1/driving/{coords(p)}", f"nearest[{i}]")
for i in range(0, 50, 10):
    ps = [pt for pair in pairs[i:i + 5] for pt in pair]
    check(f"/table/v1/driving/{coords(*ps)}?annotations=duration,distance", f"table[{i}]")
    check(f"/table/v1/driving/{coords(*ps)}?sources=0;1&destinations=2;3;4", f"table-subset[{i}]")

p, q = pairs[0]
errors = {
    "NoSegment (far away, OSRM told radiuses)": f"/route/v1/driving/{coords(p, (25.3, 60.4))}?radiuses=100;100",
    "NoSegment in a table": f"/table/v1/driving/{coords((25.3, 60.4), q)}?radiuses=100;100",
    "InvalidUrl": "/route/v1/driving",
    "InvalidQuery (coordinates)": "/route/v1/driving/abc",
    "InvalidQuery (unknown option)": f"/route/v1/driving/{coords(p, q)}?foo=bar",
    "InvalidQuery (bad value)": f"/route/v1/driving/{coords(p, q)}?steps=maybe",
    "InvalidValue": f"/route/v1/driving/{coords(p, (200, 0))}",
    "InvalidOptions (one coordinate)": f"/route/v1/driving/{coords(p)}",
    "InvalidOptions (bearings count)": f"/route/v1/driving/{coords(p, q)}?bearings=10,20",
    "InvalidVersion": f"/route/v2/driving/{coords(p, q)}",
    "TooBig": "/table/v1/driving/" + coords(*([p] * 101)),
}
for label, path in errors.items():
    (sa, a), (sb, b) = get(osrm, path), get(enroute, path)
    checked += 1
    if (sa, a.get("code")) != (sb, b.get("code")) or set(a) != set(b):
        problems.append(f"{label} {path}: OSRM {sa} {a}, EnRoute {sb} {b}")
    else:
        print(f"ok: {label}: both {sa} {a['code']}")

# --router osrm: EnRoute in front of the same OSRM answers /route/v1 as OSRM does (its durations and distances
# to 0.1, its geometry, its maneuvers), the hint aside (EnRoute's own).
for i, (p, q) in enumerate(pairs[:10]):
    path = f"/route/v1/driving/{coords(p, q)}?steps=true&geometries=polyline6&overview=full"
    (sa, a), (sb, b) = get(osrm, path), get(proxy, path)
    if sa != sb or a["code"] != b["code"]:
        problems.append(f"proxy route[{i}]: OSRM {sa} {a.get('code')}, through EnRoute {sb} {b.get('code')}"); continue
    if a["code"] != "Ok": continue
    ra, rb = a["routes"][0], b["routes"][0]
    same = (abs(ra["distance"] - rb["distance"]) <= 0.1 and abs(ra["duration"] - rb["duration"]) <= 0.1
            and ra["geometry"] == rb["geometry"]
            and [(s["maneuver"]["type"], s["name"], s["maneuver"]["location"]) for s in ra["legs"][0]["steps"]]
             == [(s["maneuver"]["type"], s["name"], s["maneuver"]["location"]) for s in rb["legs"][0]["steps"]]
            and [w["location"] for w in a["waypoints"]] == [w["location"] for w in b["waypoints"]])
    if not same: problems.append(f"proxy route[{i}] {path}: through EnRoute it differs from OSRM's own")
print(f"ok: --router osrm answered 10 routes as OSRM's own")

print(f"compared {checked} answers field by field; route distances within 5% of OSRM's: {within}/{within + len(outside)}")
for i, da, db in outside: print(f"  pair {i}: OSRM {da} m, EnRoute {db} m")
if problems:
    print(f"FAIL: {len(problems)} difference(s):")
    for line in problems[:40]: print("  " + line)
    sys.exit(1)
print("passed")
PY
