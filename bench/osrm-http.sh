#!/usr/bin/env bash
# EnRoute's /route/v1 over HTTP against osrm-routed's, in one run on the same machine: both engines built from the
# same extracts (Monaco, Baltimore, Helsinki by default), the same seeded routable pairs (random points moved onto
# the road OSRM snaps them to, kept when OSRM routes them), the same client (wrk, keep-alive, a Lua script
# cycling the pre-generated URLs), the same options, the same number of server threads; rounds alternate
# between the two. Prints p50, p99 and requests/s for each (medians of rounds) and EnRoute's ratios, and each server's
# CPU per request (user + system of its process over each round, bench/cost.py; wrk not counted): a ratio over OSRM is
# withheld when OSRM's own rounds spread more than MAX_SPREAD per cent (10).
# Usage: bench/osrm-http.sh   (MAPS="monaco baltimore Helsinki-clean" ROUNDS=2 DURATION=8 CONNECTIONS=16 PAIRS=1000
#        OPTIONS="overview=false|steps=true&geometries=polyline6&overview=full" THREADS=2)
set -euo pipefail
cd "$(dirname "$0")/.."
MAPS="${MAPS:-monaco baltimore Helsinki-clean}"; ROUNDS="${ROUNDS:-2}"; DURATION="${DURATION:-8}"; CONNECTIONS="${CONNECTIONS:-16}"
PAIRS="${PAIRS:-1000}"; THREADS="${THREADS:-2}"; OPTIONS="${OPTIONS:-overview=false|steps=true&geometries=polyline6&overview=full}"
OSRM=$(scripts/install-osrm.sh | tail -n 1)
# The folder of OSRM's tools, whether the install script printed it or the virtualenv holding the package.
[ -x "$OSRM/osrm-extract" ] || OSRM=$("$OSRM/bin/python" -c 'import osrm, os; print(os.path.join(os.path.dirname(osrm.__file__), "bin"))')
swift build -c release --product enroute >/dev/null
BIN="$(swift build -c release --show-bin-path)/enroute"
WORK=$(mktemp -d)
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_http() { for _ in $(seq 1 600); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; echo "nothing answers at $1"; exit 1; }

cp bench/wrk-cycle.lua "$WORK/cycle.lua"
. bench/cost.bash
cost_probe
python3 bench/cost.py header bench/osrm-http.sh

echo "| map | options | engine | p50 ms | p99 ms | req/s | errors |"
echo "|---|---|---|---|---|---|---|"
RESULTS="$WORK/results.txt"; : > "$RESULTS"
for map in $MAPS; do
  mkdir -p "$WORK/$map"
  cp "data/osm/$map.osm.pbf" "$WORK/$map/map.osm.pbf"
  ( cd "$WORK/$map" && "$OSRM/osrm-extract" -p "$OSRM/../share/profiles/car.lua" --small-component-size 50 map.osm.pbf > extract.log 2>&1 \
    && "$OSRM/osrm-contract" map.osrm > contract.log 2>&1 )
  "$BIN" graph build --osm "data/osm/$map.osm.pbf" --out "$WORK/$map/map.graph" > "$WORK/$map/graph.log" 2>&1
  OSRM_PORT=$(free_port); ENROUTE_PORT=$(free_port)
  "$OSRM/osrm-routed" -i 127.0.0.1 -p "$OSRM_PORT" -t "$THREADS" "$WORK/$map/map.osrm" > "$WORK/$map/routed.log" 2>&1 &
  OSRM_PID=$!; PIDS+=($OSRM_PID)
  "$BIN" serve --port "$ENROUTE_PORT" --threads "$THREADS" --db "$WORK/$map/enroute.sqlite" --graph "$WORK/$map/map.graph" > "$WORK/$map/serve.log" 2>&1 &
  ENROUTE_PID=$!; PIDS+=($ENROUTE_PID)
  wait_http "http://127.0.0.1:$OSRM_PORT/nearest/v1/driving/0,0"
  wait_http "http://127.0.0.1:$ENROUTE_PORT/healthz"
  # The seeded pairs: points spread over the extract's bounds (OSRM's snapped extremes of a coarse grid).
  python3 - "http://127.0.0.1:$OSRM_PORT" "http://127.0.0.1:$ENROUTE_PORT" "$WORK/$map/pairs.txt" "$PAIRS" "data/osm/$map.osm.pbf" <<'PY'
import json, random, sys, urllib.request, urllib.error
osrm, enroute, out, count, name = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
def get(base, path):
    try:
        with urllib.request.urlopen(base + path, timeout=20) as r: return json.loads(r.read())
    except urllib.error.HTTPError as e: return json.loads(e.read())
BOXES = {"monaco": (7.40, 43.72, 7.44, 43.75), "baltimore": (-76.70, 39.22, -76.52, 39.35),
         "Helsinki-clean": (24.936, 60.165, 24.952, 60.178), "liechtenstein": (9.47, 47.05, 9.64, 47.27),
         "andorra": (1.41, 42.43, 1.78, 42.66)}
key = name.rsplit("/", 1)[-1].replace(".osm.pbf", "")
w, s, e, n = BOXES[key]
rng = random.Random(2026)
def point():
    while True:
        lng, lat = round(rng.uniform(w, e), 6), round(rng.uniform(s, n), 6)
        a = get(osrm, f"/nearest/v1/driving/{lng},{lat}")
        if a["code"] == "Ok" and a["waypoints"][0]["distance"] < 50: return a["waypoints"][0]["location"]
pairs, skipped, enroute_failed = [], 0, 0
while len(pairs) < count:
    p, q = point(), point()
    path = f"{p[0]},{p[1]};{q[0]},{q[1]}"
    if get(osrm, f"/route/v1/driving/{path}?overview=false")["code"] != "Ok": skipped += 1; continue
    # Timed on pairs both route: a refusal is cheaper than a route and would flatter the engine that refuses.
    if get(enroute, f"/route/v1/driving/{path}?overview=false")["code"] != "Ok": enroute_failed += 1; continue
    pairs.append(path)
open(out, "w").write("\n".join(pairs) + "\n")
print(f"  {key}: {count} pairs both engines route ({skipped} drawn that OSRM could not route; "
      f"{enroute_failed} that OSRM routes and EnRoute does not, left out: the router's to explain)", file=sys.stderr)
PY
  IFS='|' read -ra VARIANTS <<< "$OPTIONS"
  for options in "${VARIANTS[@]}"; do
    python3 -c 'import sys; [print("/route/v1/driving/" + l.strip() + "?" + sys.argv[2]) for l in open(sys.argv[1]) if l.strip()]' \
      "$WORK/$map/pairs.txt" "$options" > "$WORK/$map/urls.txt"
    for engine in osrm enroute; do
      port=$OSRM_PORT; [ "$engine" = enroute ] && port=$ENROUTE_PORT
      wrk -t1 -c"$CONNECTIONS" -d2s -s "$WORK/cycle.lua" "http://127.0.0.1:$port" -- "$WORK/$map/urls.txt" > /dev/null   # warm-up
    done
    for round in $(seq 1 "$ROUNDS"); do
      for engine in osrm enroute; do
        port=$OSRM_PORT pid=$OSRM_PID; [ "$engine" = enroute ] && port=$ENROUTE_PORT pid=$ENROUTE_PID
        cost_begin "$WORK/$map/cost-$engine-$round" "$pid"
        wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$WORK/cycle.lua" "http://127.0.0.1:$port" -- "$WORK/$map/urls.txt" \
          > "$WORK/$map/wrk-$engine-$round.txt"
        cost_end "$WORK/$map/cost-$engine-$round"
        python3 -c '
import sys; sys.path.insert(0, "bench"); from lib import parse_wrk; import cost
r, c = parse_wrk(open(sys.argv[1]).read()), cost.measure(sys.argv[5])
print(sys.argv[2], sys.argv[3], sys.argv[4], r["p50"], r["p99"], r["rps"], r["non2xx"], (r["socket_errors"] or "0").replace(" ", ""),
      c["cpu"], r["requests"], c["instructions"] if c["instructions"] is not None else "-")
' "$WORK/$map/wrk-$engine-$round.txt" "$map" "$options" "$engine" "$WORK/$map/cost-$engine-$round" >> "$RESULTS"
      done
    done
  done
  kill "$OSRM_PID" "$ENROUTE_PID"; wait "$OSRM_PID" "$ENROUTE_PID" 2>/dev/null || true
done
python3 - "$RESULTS" <<'PY'
import statistics, sys
sys.path.insert(0, "bench")
import cost
rows = [l.split() for l in open(sys.argv[1])]
groups, costs = {}, {}
for m, o, e, p50, p99, rps, non2xx, sock, cpu, requests, instructions in rows:
    groups.setdefault((m, o), {}).setdefault(e, []).append((float(p50), float(p99), float(rps), int(non2xx), sock))
    costs.setdefault((m, o), {}).setdefault(e, []).append(
        {"ops": int(requests), "cpu": float(cpu), "rate": float(rps), "instructions": None if instructions == "-" else int(instructions)})
for (m, o), engines in groups.items():
    med = {}
    for e in ("osrm", "enroute"):
        runs = engines[e]
        med[e] = tuple(statistics.median(r[i] for r in runs) for i in range(3))
        errs = sum(r[3] for r in runs)
        print(f"| {m} | {o} | {e} | {med[e][0]:.3f} | {med[e][1]:.3f} | {med[e][2]:,.0f} | non-2xx {errs}; sockets {'/'.join(r[4] for r in runs)} |")
    a, b = med["osrm"], med["enroute"]
    print(f"| {m} | {o} | EnRoute/OSRM | {b[0] / a[0]:.2f}× | {b[1] / a[1]:.2f}× | {b[2] / a[2]:.2f}× | (p50, p99: lower is better; req/s: higher) |")
print()
for (m, o), engines in costs.items():
    sides = {e: cost.side(e, engines[e]) for e in ("osrm", "enroute")}
    print(f"{m}, {o}:")
    print("\n".join(cost.cost_lines(sides, "osrm", "request", "each server's process over each round; wrk not counted")))
    print(cost.result_line(f"osrm-http:{m}:{o}", sides["enroute"], sides["osrm"]))
PY
