#!/usr/bin/env bash
# Dispatch: greedy against batched matching in the simulated city, same seed, three demand levels, in one run.
# Each level runs `enroute simulate` twice on Baltimore (data/osm/baltimore.osm.pbf, its graph built into .demo/ when
# missing), once per policy (--dispatch greedy, --dispatch batched --dispatch-window WINDOW), with PROVIDERS providers
# for DURATION of demand at SPEEDUP× and no faults, and reads the report's `dispatch` section: pickup seconds
# mean / p90 (assignment to the provider at the pickup), request-to-assignment p50 / p99, the matched share, empty km
# per matched trip, and the rides' no-provider rate. Then per level: batched/greedy mean pickup time (goal at peak
# ≤ 0.90, at light within ±3 %) and batched's match p99 minus greedy's (goal: at most one window), as a
# `RESULT dispatch ...` line.
# Levels (LEVELS, name=RIDES,ORDERS per simulated minute): light and busy stay within the providers' supply; at peak
# the requests outrun it (a trip holds its provider about 20 simulated minutes, so 12 a minute need about 240
# providers against 60: the rides' no-provider rate and the matched share show it).
# Then one greedy run with a share of the rides booked ahead (--scheduled-share SCHEDULED, 20–60 min ahead) at
# SCHEDULED_DEMAND, sped up to SCHEDULED_SPEEDUP× since its drain waits for the last booked ride, and its
# `dispatch.scheduled` as a `RESULT dispatch scheduled ...` line: booked rides matched by their time (goal ≥ 95 %) and
# met at the pickup within 5 minutes of it (goal ≥ 90 %). SCHEDULED=0 skips it.
# Then one greedy run of orders only with fewer couriers (STACKED_PROVIDERS at STACKED_DEMAND: orders outnumber idle
# couriers, so dispatch stacks) and its `dispatch.stacked` as a `RESULT dispatch stacked ...` line: the share of the
# orders assigned that came by a stacked offer (goal ≥ 15 %) and the p90 of the minutes those offers planned to add to
# the carried order (goal ≤ 5, as dispatch's road table planned it, not measured). STACKED_DEMAND=0 skips it.
# Knobs: LEVELS, PROVIDERS (60), DURATION (20m), SPEEDUP (10), SEED (7), WINDOW (2), SCRATCH (.build), SCHEDULED (0.5),
# SCHEDULED_DEMAND (1.5,0.5), SCHEDULED_SPEEDUP (30), STACKED_DEMAND (0,3), STACKED_PROVIDERS (30).
set -euo pipefail
cd "$(dirname "$0")/.."
LEVELS="${LEVELS:-light=0.5,0.5 busy=1.5,1.5 peak=6,6}"
PROVIDERS="${PROVIDERS:-60}"; DURATION="${DURATION:-20m}"; SPEEDUP="${SPEEDUP:-10}"; SEED="${SEED:-7}"
WINDOW="${WINDOW:-2}"; SCRATCH="${SCRATCH:-.build}"; GRAPH=.demo/baltimore.graph
SCHEDULED="${SCHEDULED:-0.5}"; SCHEDULED_DEMAND="${SCHEDULED_DEMAND:-1.5,0.5}"
SCHEDULED_SPEEDUP="${SCHEDULED_SPEEDUP:-30}"
STACKED_DEMAND="${STACKED_DEMAND:-0,3}"; STACKED_PROVIDERS="${STACKED_PROVIDERS:-30}"
scripts/install-deps.sh build
# swift build prints its errors on standard output: show them when it fails. A source edited while it builds (a tree
# shared with other work) is built again, up to three times.
for attempt in 1 2 3; do
  out=$(swift build -c release --scratch-path "$SCRATCH" --product enroute 2>&1) && break
  grep -q "modified during the build" <<< "$out" && [ "$attempt" -lt 3 ] && continue
  echo "$out" >&2; exit 1
done
mkdir -p .demo "$SCRATCH"
WORK=$(mktemp -d "$SCRATCH/bench-dispatch.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# Every run uses this copy: a build during the bench changes nothing under it.
cp "$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)/enroute" "$WORK/enroute"
BIN="$WORK/enroute"
[ -f "$GRAPH" ] || "$BIN" graph build --osm data/osm/baltimore.osm.pbf --out "$GRAPH" > /dev/null
OUT=bench/out/dispatch; mkdir -p "$OUT"

python3 bench/cost.py header bench/dispatch.sh
changed=$(git status --short -- Sources Package.swift 2>/dev/null | wc -l)
[ "$changed" = 0 ] || echo "built with $changed uncommitted source files beside the commit: $(git status --short -- Sources | awk '{print $2}' | tr '\n' ' ')"
echo "Baltimore, $PROVIDERS providers, $DURATION of demand at ${SPEEDUP}× (then up to 10 simulated minutes for trips" \
  "under way), seed $SEED, no faults; batched window $WINDOW s"
TIMEFORMAT='%R %U %S'
for level in $LEVELS; do
  name=${level%%=*}; demand=${level#*=}
  for policy in greedy batched; do
    flags=(--dispatch "$policy"); [ "$policy" = batched ] && flags+=(--dispatch-window "$WINDOW")
    dir="$OUT/$name-$policy"; rm -rf "$dir"
    { time "$BIN" simulate --map "$GRAPH" --providers "$PROVIDERS" --demand "$demand" --duration "$DURATION" \
        --speedup "$SPEEDUP" --seed "$SEED" "${flags[@]}" --report "$dir" > "$WORK/table.txt" \
        2> "$WORK/progress.txt" ; } 2> "$WORK/time.txt" || {
      echo "bench/dispatch.sh: $name $policy failed" >&2; tail -20 "$WORK/progress.txt" >&2; exit 1; }
    cp "$WORK/table.txt" "$dir/table.txt"
    read -r wall user sys < "$WORK/time.txt"
    echo "$name $policy $demand $wall $user $sys" >> "$WORK/runs"
  done
done

python3 - "$OUT" "$WORK/runs" "$WINDOW" <<'EOF'
import json, sys
out, runs, window = sys.argv[1], sys.argv[2], float(sys.argv[3])
def f(v, digits=1):
    return "–" if v is None else f"{v:.{digits}f}"
rows, levels = {}, []
print(f"{'level':6} {'policy':8} {'demand/min':>10} {'pickup mean':>11} {'p90':>6} {'match p50':>9} {'p99':>7}"
      f" {'matched':>7} {'empty km':>8} {'no-prov':>7} {'wall s':>6} {'cpu':>5}")
for line in open(runs):
    name, policy, demand, wall, user, sys_ = line.split()
    report = json.load(open(f"{out}/{name}-{policy}/report.json"))
    d = report["dispatch"]
    rows[(name, policy)] = d
    if name not in levels:
        levels.append(name)
    rides, orders = (float(x) for x in demand.split(","))
    share = "–" if d["matchedShare"] is None else f"{d['matchedShare'] * 100:.1f}%"
    nopro = "–" if report["noProviderRate"] is None else f"{report['noProviderRate'] * 100:.1f}%"
    cpu = (float(user) + float(sys_)) / float(wall)
    print(f"{name:6} {policy:8} {rides + orders:>10g} {f(d['pickupSeconds']['mean']):>11} "
          f"{f(d['pickupSeconds']['p90'], 0):>6} {f(d['matchSeconds']['p50']):>9} {f(d['matchSeconds']['p99']):>7} "
          f"{share:>7} {f(d['emptyKmPerTrip'], 2):>8} {nopro:>7} {float(wall):>6.0f} {cpu:>5.2f}")
print("(seconds; cpu: cores the simulator and its embedded server used on average, of the machine's)")
for name in levels:
    g, b = rows.get((name, "greedy")), rows.get((name, "batched"))
    if not g or not b:
        continue
    gm, bm = g["pickupSeconds"]["mean"], b["pickupSeconds"]["mean"]
    ratio = bm / gm if gm and bm is not None else None
    g99, b99 = g["matchSeconds"]["p99"], b["matchSeconds"]["p99"]
    diff = b99 - g99 if g99 is not None and b99 is not None else None
    if ratio is None:
        pickup_goal = "unknown"
    elif name == "peak":
        pickup_goal = "goal ≤ 0.90 " + ("met" if ratio <= 0.90 else "NOT met")
    elif name == "light":
        pickup_goal = "goal 0.97–1.03 " + ("met" if 0.97 <= ratio <= 1.03 else "NOT met")
    else:
        pickup_goal = "no goal"
    match_goal = "unknown" if diff is None else f"goal ≤ {window:g} s " + ("met" if diff <= window else "NOT met")
    print(f"RESULT dispatch level={name} pickup_mean_ratio={f(ratio, 3)} ({pickup_goal}) "
          f"match_p99_diff={'–' if diff is None else f'{diff:+.1f}'}s ({match_goal}) "
          f"matched greedy={f(g['matchedShare'], 3)} batched={f(b['matchedShare'], 3)} "
          f"empty_km greedy={f(g['emptyKmPerTrip'], 2)} batched={f(b['emptyKmPerTrip'], 2)}")
EOF

if [ "$SCHEDULED" != 0 ]; then
  dir="$OUT/scheduled"; rm -rf "$dir"
  "$BIN" simulate --map "$GRAPH" --providers "$PROVIDERS" --demand "$SCHEDULED_DEMAND" --duration "$DURATION" \
    --speedup "$SCHEDULED_SPEEDUP" --seed "$SEED" --scheduled-share "$SCHEDULED" --report "$dir" \
    > "$WORK/table.txt" 2> "$WORK/progress.txt" || {
    echo "bench/dispatch.sh: scheduled run failed" >&2; tail -20 "$WORK/progress.txt" >&2; exit 1; }
  cp "$WORK/table.txt" "$dir/table.txt"
  grep "^booked" "$dir/table.txt" || true
  python3 - "$dir/report.json" "$SCHEDULED" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["dispatch"]["scheduled"]
def goal(v, at_least):
    met = "unknown" if v is None else "met" if v >= at_least else "NOT met"
    return f"{'–' if v is None else f'{v:.3f}'} (goal ≥ {at_least:g} {met})"
print(f"RESULT dispatch scheduled share={sys.argv[2]} count={s['count']} "
      f"matched_before_due={goal(s['matchedBeforeDueShare'], 0.95)} on_time={goal(s['onTimeShare'], 0.90)}")
EOF
fi

if [ "$STACKED_DEMAND" != 0 ]; then
  dir="$OUT/stacked"; rm -rf "$dir"
  "$BIN" simulate --map "$GRAPH" --providers "$STACKED_PROVIDERS" --demand "$STACKED_DEMAND" --duration "$DURATION" \
    --speedup "$SPEEDUP" --seed "$SEED" --report "$dir" > "$WORK/table.txt" 2> "$WORK/progress.txt" || {
    echo "bench/dispatch.sh: stacked run failed" >&2; tail -20 "$WORK/progress.txt" >&2; exit 1; }
  cp "$WORK/table.txt" "$dir/table.txt"
  grep -E "^(orders stacked|stacked:)" "$dir/table.txt" || true
  python3 - "$dir/report.json" "$STACKED_PROVIDERS" "$STACKED_DEMAND" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["dispatch"]["stacked"]
def f(v, digits=3):
    return "–" if v is None else f"{v:.{digits}f}"
share, extra = s["share"], s["extraMinutesP90"]
met = "unknown" if share is None else "met" if share >= 0.15 and (extra or 0) <= 5 else "NOT met"
print(f"RESULT dispatch stacked providers={sys.argv[2]} demand={sys.argv[3]} count={s['count']} "
      f"of={s['ordersAssigned']} share={f(share)} extra_min_p90={f(extra, 1)} (planned; goal share ≥ 0.15 and "
      f"p90 ≤ 5 {met}) fell_to_zero={f(s['stopsBeforeFellToZeroShare'])} "
      f"never_showed_a_stop_before={s['neverShowedStopsBefore']}")
EOF
fi
