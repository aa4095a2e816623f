#!/usr/bin/env bash
# EnRoute against OSRM on the same maps, same machine, same run, same pairs.
#
# For each map (data/osm's Monaco, Baltimore, Liechtenstein, Andorra, Helsinki, and a generated city of
# CITY_NODES road nodes written as OSM PBF by `routing-bench city`): both engines' graph builds (wall time, CPU
# time and peak RSS: `enroute graph build`; `osrm-extract --small-component-size 50` + `osrm-contract`), then
# PAIRS seeded random pairs of EnRoute network nodes routed in process by both (EnRoute's Router via
# `routing-bench pairs`: snap, CH, geometry and steps; OSRM's Python API with steps, full overview, polyline6),
# p50/p99 for both, distance agreement (share within 1% and 5%), the duration ratio EnRoute/OSRM (p10/p50/p90),
# failures on either side, and EnRoute's CH weights against Dijkstra on its own graph for the first CHECK pairs
# (must be 0 mismatches; in a pass after the timed one, so its sweeps do not chill the caches between timed queries). Pairs disagreeing by more than 5% are listed in bench/out/routing/MAP.disagree.tsv.
# Cost per route: each side's CPU time (the calling thread's, user + system) summed over its routes, over their count.
#
# Usage: bench/routing.sh [map…]   (maps: monaco baltimore liechtenstein andorra helsinki city; default all)
# Environment: PAIRS (10000), SEED (1), CHECK (2000), CITY_NODES (1000000), OSRM_VENV (.build/osrm-venv), HTTP (1; 0 skips
# the HTTP comparison), HTTP_PAIRS, HTTP_SECONDS, HTTP_CONNECTIONS, HTTP_THREADS, HTTP_OPTIONS (see below).
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS="${PAIRS:-10000}"; SEED="${SEED:-1}"; CHECK="${CHECK:-2000}"; CITY_NODES="${CITY_NODES:-1000000}"
MAPS=("$@"); [ ${#MAPS[@]} -gt 0 ] || MAPS=(monaco baltimore liechtenstein andorra helsinki city)
OUT="$PWD/bench/out/routing"; mkdir -p "$OUT"

[ "${HTTP:-1}" = 0 ] || scripts/install-deps.sh bench   # wrk for the HTTP comparison
VENV="${OSRM_VENV:-$PWD/.build/osrm-venv}"
OSRM="$(dirname "$(scripts/install-osrm.sh "$VENV")")"   # the osrm package: bin/ and share/profiles/
swift build -c release --product enroute >/dev/null
swift build -c release --product routing-bench >/dev/null
BIN="$(swift build -c release --show-bin-path)"

# "wall_s cpu_s peak_MiB" of a command (its output to $2), via GNU time.
measure() {
  local log="$1"; shift
  /usr/bin/time -f "TIME %e %U %S %M" "$@" >"$log" 2>&1 || { echo "failed: $* (see $log)" >&2; tail -5 "$log" >&2; exit 1; }
  awk '/^TIME /{printf "%.2f %.2f %.0f\n", $2, $3 + $4, $5 / 1024}' "$log"
}
json() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d[sys.argv[2]])' "$1" "$2"; }

source_of() {
  case "$1" in
    monaco) echo data/osm/monaco.osm.pbf ;;
    baltimore) echo data/osm/baltimore.osm.pbf ;;
    liechtenstein) echo data/osm/liechtenstein.osm.pbf ;;
    andorra) echo data/osm/andorra.osm.pbf ;;
    helsinki) echo data/osm/Helsinki-clean.osm.pbf ;;
    city) echo "$OUT/city.osm.pbf" ;;
    *) echo "unknown map $1" >&2; exit 64 ;;
  esac
}

# --- HTTP comparison -------------------------------------------------------------------------------------------
# osrm-routed against `enroute serve --graph G` on /route/v1/driving/..., both on the graphs built above, HTTP_THREADS
# server threads each, the same wrk client (keep-alive, HTTP_CONNECTIONS connections, a Lua script cycling the URLs of
# the first HTTP_PAIRS pairs EnRoute routed), each option set of HTTP_OPTIONS, a warm-up then HTTP_SECONDS seconds
# per engine; prints p50/p99/req/s per engine and option set and appends them to $OUT/http.tsv.
HTTP_PAIRS="${HTTP_PAIRS:-1000}"; HTTP_SECONDS="${HTTP_SECONDS:-8}"; HTTP_CONNECTIONS="${HTTP_CONNECTIONS:-16}"; HTTP_THREADS="${HTTP_THREADS:-2}"
HTTP_OPTIONS="${HTTP_OPTIONS:-steps=true&geometries=polyline6&overview=full|overview=false}"
cp bench/wrk-cycle.lua "$OUT/cycle.lua"
: > "$OUT/http.tsv"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_http() { for _ in $(seq 1 900); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; echo "nothing answers at $1" >&2; return 1; }
http_compare() {
  local map="$1" osrm_port enroute_port osrm_pid enroute_pid options engine port
  osrm_port=$(free_port); enroute_port=$(free_port)
  "$OSRM/bin/osrm-routed" -i 127.0.0.1 -p "$osrm_port" -t "$HTTP_THREADS" "$OUT/osrm-$map/$map.osrm" > "$OUT/$map.routed.log" 2>&1 &
  osrm_pid=$!
  rm -rf "$OUT/$map.sqlite"*
  # --live-speeds off: free-flow weights, the ones the in-process comparison and OSRM use (with it on, the time-of-day
  # table re-weights every edge 30 s in and the hierarchy is re-customised mid-run).
  "$BIN/enroute" serve --port "$enroute_port" --threads "$HTTP_THREADS" --db "$OUT/$map.sqlite" --graph "$OUT/$map.graph" --live-speeds off \
    > "$OUT/$map.serve.log" 2>&1 &
  enroute_pid=$!
  wait_http "http://127.0.0.1:$osrm_port/nearest/v1/driving/0,0" && wait_http "http://127.0.0.1:$enroute_port/healthz"
  IFS='|' read -ra variants <<< "$HTTP_OPTIONS"
  for options in "${variants[@]}"; do
    awk -F'\t' -v n="$HTTP_PAIRS" -v o="$options" '$5 != "-" && c < n { printf "/route/v1/driving/%s,%s;%s,%s?%s\n", $1, $2, $3, $4, o; c++ }' \
      "$OUT/$map.pairs.tsv" > "$OUT/$map.urls.txt"
    for engine in osrm enroute; do
      port=$osrm_port; [ "$engine" = enroute ] && port=$enroute_port
      wrk -t1 -c"$HTTP_CONNECTIONS" -d2s -s "$OUT/cycle.lua" "http://127.0.0.1:$port" -- "$OUT/$map.urls.txt" > /dev/null
      wrk -t1 -c"$HTTP_CONNECTIONS" -d"${HTTP_SECONDS}s" --latency -s "$OUT/cycle.lua" "http://127.0.0.1:$port" -- "$OUT/$map.urls.txt" \
        > "$OUT/$map.wrk-$engine.txt"
      python3 -c '
import sys; sys.path.insert(0, "bench"); from lib import parse_wrk
r = parse_wrk(open(sys.argv[1]).read())
print("\t".join([sys.argv[2], sys.argv[3], sys.argv[4], str(r["p50"]), str(r["p99"]), str(r["rps"]), str(r["non2xx"])]))
' "$OUT/$map.wrk-$engine.txt" "$map" "$options" "$engine" | tee -a "$OUT/http.tsv" | awk -F'\t' '{ printf "  http %s %s: p50 %.3f ms, p99 %.3f ms, %.0f req/s, non-2xx %s\n", $3, $2, $4, $5, $6, $7 }'
    done
  done
  kill "$osrm_pid" "$enroute_pid"; wait "$osrm_pid" "$enroute_pid" 2>/dev/null || true
}
# ---------------------------------------------------------------------------------------------------------------

ROWS=(); COSTS=()
for map in "${MAPS[@]}"; do
  pbf="$(source_of "$map")"
  echo "== $map"
  if [ "$map" = city ]; then
    "$BIN/routing-bench" city --nodes "$CITY_NODES" --out "$pbf" --seed "$SEED"
  fi
  read -r e_wall e_cpu e_rss < <(measure "$OUT/$map.enroute-build.log" "$BIN/enroute" graph build --osm "$pbf" --out "$OUT/$map.graph")
  echo "  enroute build: ${e_wall} s wall, ${e_cpu} s CPU, ${e_rss} MiB peak"
  rm -rf "$OUT/osrm-$map"; mkdir -p "$OUT/osrm-$map"; cp "$pbf" "$OUT/osrm-$map/$map.osm.pbf"
  read -r x_wall x_cpu x_rss < <(measure "$OUT/$map.osrm-extract.log" "$OSRM/bin/osrm-extract" -p "$OSRM/share/profiles/car.lua" \
    --small-component-size 50 "$OUT/osrm-$map/$map.osm.pbf")
  read -r c_wall c_cpu c_rss < <(measure "$OUT/$map.osrm-contract.log" "$OSRM/bin/osrm-contract" "$OUT/osrm-$map/$map.osrm")
  o_wall=$(python3 -c "print(round($x_wall + $c_wall, 2))"); o_cpu=$(python3 -c "print(round($x_cpu + $c_cpu, 2))")
  o_rss=$(( x_rss > c_rss ? x_rss : c_rss ))
  echo "  osrm build: ${o_wall} s wall (extract ${x_wall}, contract ${c_wall}), ${o_cpu} s CPU, ${o_rss} MiB peak"

  ours=$("$BIN/routing-bench" pairs --graph "$OUT/$map.graph" --pairs "$PAIRS" --seed "$SEED" --check "$CHECK" \
    --out "$OUT/$map.pairs.tsv" | sed -n 's/^RESULT //p')
  theirs=$("$VENV/bin/python" bench/routing_osrm.py "$OUT/osrm-$map/$map.osrm" "$OUT/$map.pairs.tsv" "$OUT/$map.disagree.tsv" | sed -n 's/^RESULT //p')
  echo "  enroute: $ours"
  echo "  osrm:    $theirs"
  COSTS+=("$map"$'\t'"$ours"$'\t'"$theirs")
  [ "${HTTP:-1}" = 1 ] && http_compare "$map"
  ROWS+=("$(python3 - "$map" "$ours" "$theirs" "$e_wall" "$e_rss" "$o_wall" "$o_rss" <<'PY'
import json, sys
m, ours, theirs = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
ew, er, ow, orss = (float(x) for x in sys.argv[4:8])
print(f"| {m} | {ours['nodes']:,} / {ours['edges']:,} | {ew:.1f} s, {er:.0f} MiB | {ow:.1f} s, {orss:.0f} MiB "
      f"| {ours['route_p50_ms']:.3f} / {ours['route_p99_ms']:.3f} ({ours['route_cpu_p99_ms']:.3f}) | {ours['ch_p50_ms']:.3f} / {ours['ch_p99_ms']:.3f} "
      f"| {theirs['osrm_p50_ms']:.3f} / {theirs['osrm_p99_ms']:.3f} ({theirs['osrm_cpu_p99_ms']:.3f}) | {theirs['osrm_p50_ms'] / max(ours['route_p50_ms'], 1e-9):.1f}x "
      f"| {100 * theirs['within1']:.1f}% / {100 * theirs['within5']:.1f}% | {theirs['over5']} ({theirs['over5_near_ties']}) "
      f"| {theirs['ratio_p10']:.2f} / {theirs['ratio_p50']:.2f} / {theirs['ratio_p90']:.2f} "
      f"| {ours['failures']} / {theirs['enroute_failures_osrm_ok']} / {theirs['osrm_failures_enroute_ok']} "
      f"| {ours['dijkstra_mismatches']} of {ours['dijkstra_checked']} |")
PY
)")
done

echo
python3 bench/cost.py header bench/routing.sh
echo "Same machine, one run, $PAIRS pairs per map (seed $SEED), Dijkstra check on the first $CHECK; query times in ms, wall"
echo "clock, with the thread's CPU time p99 in brackets (the wall p99 includes time other processes held the core)."
echo "A near-tie is a pair over 5% apart in distance whose two routes take within 3% of the same time, each engine"
echo "timing its own: alternatives a small difference in weighting tips either way (every such pair: MAP.disagree.tsv)."
echo "| map | junctions / directed edges | EnRoute build | OSRM build | EnRoute route p50 / p99 (CPU p99) | EnRoute CH p50 / p99 | OSRM (Python) p50 / p99 (CPU p99) | p50 OSRM/EnRoute | distance within 1% / 5% | over 5% (of them near-ties) | duration ratio p10 / p50 / p90 | no route: EnRoute (all) / EnRoute only / OSRM only | Dijkstra mismatches |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${ROWS[@]}"
echo
echo "Over HTTP: wrk, $HTTP_CONNECTIONS keep-alive connections, $HTTP_SECONDS s per engine after a 2 s warm-up, $HTTP_THREADS server threads each,"
echo "the first $HTTP_PAIRS pairs EnRoute routed; p50 / p99 in ms."
echo "| map | options | osrm-routed p50 / p99, req/s | enroute serve p50 / p99, req/s | EnRoute/OSRM req/s | p50 OSRM/EnRoute |"
echo "| --- | --- | --- | --- | --- | --- |"
python3 - "$OUT/http.tsv" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    m, o, e, p50, p99, rps, bad = line.rstrip("\n").split("\t")
    rows.setdefault((m, o), {})[e] = (float(p50), float(p99), float(rps), bad)
for (m, o), r in rows.items():
    if "osrm" not in r or "enroute" not in r: continue
    a, b = r["osrm"], r["enroute"]
    print(f"| {m} | {o} | {a[0]:.3f} / {a[1]:.3f}, {a[2]:,.0f} | {b[0]:.3f} / {b[1]:.3f}, {b[2]:,.0f} | {b[2] / a[2]:.2f}x | {a[0] / b[0]:.2f}x |")
PY
echo
echo "Cost per route, in process (each side's calling thread's CPU time summed over its routes, over their count;"
echo "both with steps, full overview, polyline6; one pass each, so its spread is not measured):"
printf '%s\n' "${COSTS[@]}" | python3 -c '
import json, sys
sys.path.insert(0, "bench")
import cost
for line in sys.stdin:
    if not line.strip():
        continue
    m, ours, theirs = line.rstrip("\n").split("\t")
    e, o = json.loads(ours).get("route_cpu_mean_ms"), json.loads(theirs).get("osrm_cpu_mean_ms")
    if e is None or o is None:
        print(f"  {m}: CPU per route not reported"); continue
    print(f"  {m}: EnRoute {e * 1000:.1f} µs CPU per route, OSRM (Python binding) {o * 1000:.1f} µs: EnRoute / OSRM {e / max(o, 1e-12):.2f}x")
    print(f"RESULT cost routing:{m} enroute {e * 1000:.3f} osrm {o * 1000:.3f} {e / max(o, 1e-12):.4f} - - - - - - -")
note = cost.instructions_note()
print("  " + (note or "instructions: not counted (in-process timings; perf stat counts processes)"))
'
