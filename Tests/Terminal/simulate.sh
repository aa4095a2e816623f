#!/usr/bin/env bash
# A short simulated city run of the built `enroute simulate` on the demo map (Helsinki), in a process of its own so
# its real-time pace never competes with the Swift suite's live-socket tests: trips complete, every step is applied
# exactly once, every payment is captured, the ledger balances and report.json has every key the docs list (with a
# short rush hour, which it states; dispatch.stacked and dispatch.surge among them).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN="${ENROUTE_BIN:-$(swift build --show-bin-path)/enroute}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
GRAPH="$WORK/helsinki.graph"
"$BIN" graph build --osm data/osm/Helsinki-clean.osm.pbf --out "$GRAPH" > "$WORK/build.txt" 2>&1 || { echo "FAIL: graph build"; cat "$WORK/build.txt"; exit 1; }
timeout 300 "$BIN" simulate --map "$GRAPH" --providers 6 --demand 1,1 --duration 3m --speedup 40 --seed 3 \
  --rush-hour 1m-2m:2 --faults loss=0.05,partition=20,every=120 --report "$WORK/report" > "$WORK/table.txt" 2> "$WORK/progress.txt" || {
  echo "FAIL: enroute simulate exited $?"; tail -20 "$WORK/progress.txt"; exit 1; }
python3 - "$WORK/report/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
keys = {"tripsCompleted", "etaHonesty", "etaRangeMedianMinutes", "etaErrorSeconds", "staleShownAsLive", "snapshotAgeShownSeconds",
        "outOfOrderDrops", "liveActivityStaleRate", "pollsPerOrderMinute", "matchSeconds", "noProviderRate", "stepsLost",
        "stepsDuplicated", "ledgerBalanced"}
missing = keys - r.keys()
assert not missing, f"report.json lacks {sorted(missing)}"
assert r["tripsCompleted"] > 0, "no trip completed"
assert r["stepsLost"] == 0 and r["stepsDuplicated"] == 0, f"steps lost {r['stepsLost']}, applied twice {r['stepsDuplicated']}"
assert r["ledgerBalanced"] is True, "the ledger does not balance"
assert r["paymentsCaptured"] == r["paymentsExpected"], f"captured {r['paymentsCaptured']} of {r['paymentsExpected']}"
print(f"ok: {r['tripsCompleted']} trips completed, 0 steps lost or doubled, {r['paymentsCaptured']} payments captured, ledger balanced")
d = r["dispatch"]
assert d["policy"] == "greedy" and d["windowSeconds"] is None, f"dispatch policy {d['policy']}, window {d['windowSeconds']}"
assert 0 < d["matchedShare"] <= 1 and d["pickupSeconds"]["mean"] > 0 and d["emptyKmPerTrip"] > 0, f"dispatch {d}"
print(f"ok: dispatch matched {d['matchedShare']:.0%}, pickup mean {d['pickupSeconds']['mean']:.0f} s")
s = d["scheduled"]
assert s == {"count": 0, "matchedBeforeDueShare": None, "onTimeShare": None}, f"dispatch.scheduled without bookings {s}"
print("ok: dispatch.scheduled is empty without --scheduled-share")
for section, keys in (("stacked", {"ordersAssigned", "count", "share", "extraMinutesP90", "deliveredOnStacks",
                                   "stopsBeforeFellToZeroShare", "neverShowedStopsBefore"}),
                      ("surge", {"quotes", "quotedShare", "max"})):
    assert set(d[section].keys()) == keys, f"dispatch.{section} has {sorted(d[section].keys())}"
u = d["surge"]
assert u["quotes"] == 0 or (0 <= u["quotedShare"] <= 1 and u["max"] >= 1), f"dispatch.surge {u}"
print(f"ok: dispatch.stacked and dispatch.surge are there (surge on {u['quotedShare']} of {u['quotes']} estimates)")
assert r["demand"] == {"ridesPerMinute": 1, "ordersPerMinute": 1,
                       "rushHour": {"fromSeconds": 60, "toSeconds": 120, "factor": 2}}, f"demand {r['demand']}"
print("ok: report.json states the rush hour it ran")
PY
grep -q "^enroute_dispatch" "$WORK/report/metrics.txt" && echo "ok: metrics.txt holds the embedded server's metrics"
head -1 "$WORK/report/quotes.csv" | grep -q "^second,multiplier$" && echo "ok: quotes.csv lists the estimates"
test -s "$WORK/report/report.html" && grep -q "<svg" "$WORK/report/report.html" && echo "ok: report.html has its charts inline"
