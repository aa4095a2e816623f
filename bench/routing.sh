#!/usr/bin/env bash
# EnRoute against OSRM on the same maps, same machine, same run, same pairs (issue 12, item 9).
#
# For each map (data/osm's Monaco, Baltimore, Liechtenstein, Andorra, Helsinki, and a generated city of
# CITY_NODES road nodes written as OSM PBF by `routing-bench city`): both engines' graph builds (wall time, CPU
# time and peak RSS: `enroute graph build`; `osrm-extract --small-component-size 50` + `osrm-contract`), then
# PAIRS seeded random pairs of EnRoute network nodes routed in process by both (EnRoute's Router via
# `routing-bench pairs`: snap, CH, geometry and steps; OSRM's Python API with steps, full overview, polyline6),
# p50/p99 for both, distance agreement (share within 1% and 5%), the duration ratio EnRoute/OSRM (p10/p50/p90),
# failures on either side, and EnRoute's CH weights against Dijkstra on its own graph for the first CHECK pairs
# (must be 0 mismatches). Pairs disagreeing by more than 5% are listed in bench/out/routing/MAP.disagree.tsv.
#
# Usage: bench/routing.sh [map…]   (maps: monaco baltimore liechtenstein andorra helsinki city; default all)
# Environment: PAIRS (10000), SEED (1), CHECK (2000), CITY_NODES (1000000), OSRM_VENV (.build/osrm-venv).
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS="${PAIRS:-10000}"; SEED="${SEED:-1}"; CHECK="${CHECK:-2000}"; CITY_NODES="${CITY_NODES:-1000000}"
MAPS=("$@"); [ ${#MAPS[@]} -gt 0 ] || MAPS=(monaco baltimore liechtenstein andorra helsinki city)
OUT="$PWD/bench/out/routing"; mkdir -p "$OUT"

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

# --- HTTP comparison hook -------------------------------------------------------------------------------------
# osrm-routed against `enroute serve --graph G` on /route/v1/driving/..., same keep-alive client, same options,
# p50 and throughput, reconnecting before 512 requests (osrm-routed drops the 512th on one connection).
# The OSRM-compatible endpoint is another helper's item; until `enroute serve` answers /route/v1 this prints
# a pending line. Fill in http_compare when it lands: start both servers on loopback ports, run
# bench/routing_http.py (not written yet) over $OUT/$map.pairs.tsv against each, stop them by pid.
http_compare() {
  local map="$1"
  echo "  http: pending (enroute serve has no /route/v1 endpoint on this branch yet)"
}
# ---------------------------------------------------------------------------------------------------------------

ROWS=()
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
  http_compare "$map"
  ROWS+=("$(python3 - "$map" "$ours" "$theirs" "$e_wall" "$e_rss" "$o_wall" "$o_rss" <<'PY'
import json, sys
m, ours, theirs = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
ew, er, ow, orss = (float(x) for x in sys.argv[4:8])
print(f"| {m} | {ours['nodes']:,} / {ours['edges']:,} | {ew:.1f} s, {er:.0f} MiB | {ow:.1f} s, {orss:.0f} MiB "
      f"| {ours['route_p50_ms']:.3f} / {ours['route_p99_ms']:.3f} ({ours['route_cpu_p99_ms']:.3f}) | {ours['ch_p50_ms']:.3f} / {ours['ch_p99_ms']:.3f} "
      f"| {theirs['osrm_p50_ms']:.3f} / {theirs['osrm_p99_ms']:.3f} ({theirs['osrm_cpu_p99_ms']:.3f}) | {theirs['osrm_p50_ms'] / max(ours['route_p50_ms'], 1e-9):.1f}x "
      f"| {100 * theirs['within1']:.1f}% / {100 * theirs['within5']:.1f}% "
      f"| {theirs['ratio_p10']:.2f} / {theirs['ratio_p50']:.2f} / {theirs['ratio_p90']:.2f} "
      f"| {ours['failures']} / {theirs['enroute_failures_osrm_ok']} / {theirs['osrm_failures_enroute_ok']} "
      f"| {ours['dijkstra_mismatches']} of {ours['dijkstra_checked']} |")
PY
)")
done

echo
echo "Same machine, one run, $PAIRS pairs per map (seed $SEED), Dijkstra check on the first $CHECK; query times in ms, wall"
echo "clock, with the thread's CPU time p99 in brackets (the wall p99 includes time other processes held the core)."
echo "| map | junctions / directed edges | EnRoute build | OSRM build | EnRoute route p50 / p99 (CPU p99) | EnRoute CH p50 / p99 | OSRM (Python) p50 / p99 (CPU p99) | p50 OSRM/EnRoute | distance within 1% / 5% | duration ratio p10 / p50 / p90 | no route: EnRoute (all) / EnRoute only / OSRM only | Dijkstra mismatches |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${ROWS[@]}"
