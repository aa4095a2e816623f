"""OSRM's side of bench/routing.sh: the pairs routing-bench wrote, routed in process through OSRM's Python API
(osrm-bindings, CH), timed per request, and compared with EnRoute's distances and durations on the same pairs.

Usage: routing_osrm.py MAP.osrm PAIRS.tsv DISAGREEMENTS.tsv  ->  prints one RESULT JSON line.
Each pairs line: lon1 lat1 lon2 lat2 enroute_distance_m enroute_duration_s ('-' where EnRoute found no route).
The same options as EnRoute's Router.route computes: steps, full overview, polyline6 geometry.
"""
import json
import sys
import time

import osrm


def percentile(values, p):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(round((len(values) - 1) * p)))]


def main():
    engine = osrm.OSRM(sys.argv[1])
    pairs = [line.rstrip("\n").split("\t") for line in open(sys.argv[2]) if line.strip()]
    times, cpu_times, ratios, disagreements = [], [], [], []
    within1 = within5 = both = 0
    # Pairs over 5% apart in distance whose two routes take within 3% of the same time (each engine timing its own):
    # near-ties between alternatives, which a small difference in weighting tips either way.
    near_ties = 0
    osrm_only = enroute_only = neither = 0
    for index, (lon1, lat1, lon2, lat2, distance, duration) in enumerate(pairs):
        params = osrm.RouteParameters(coordinates=[(float(lon1), float(lat1)), (float(lon2), float(lat2))],
                                      steps=True, overview="full", geometries="polyline6")
        start, cpu_start = time.perf_counter(), time.thread_time()
        try:
            result = engine.Route(params)
            ok = result["code"] == "Ok" and len(result["routes"]) > 0
        except RuntimeError:
            ok = False
        times.append((time.perf_counter() - start) * 1000)
        cpu_times.append((time.thread_time() - cpu_start) * 1000)
        ours = distance != "-"
        if ok:
            route = result["routes"][0]
            theirs_distance, theirs_duration = float(route["distance"]), float(route["duration"])
        if ok and ours:
            both += 1
            ours_distance, ours_duration = float(distance), float(duration)
            scale = max(theirs_distance, 1.0)
            difference = abs(ours_distance - theirs_distance) / scale
            if difference <= 0.01 or abs(ours_distance - theirs_distance) <= 1:
                within1 += 1
            if difference <= 0.05 or abs(ours_distance - theirs_distance) <= 5:
                within5 += 1
            else:
                disagreements.append((index, lon1, lat1, lon2, lat2, ours_distance, theirs_distance, ours_duration, theirs_duration))
                if theirs_duration > 0 and abs(ours_duration - theirs_duration) <= 0.03 * theirs_duration:
                    near_ties += 1
            if theirs_duration > 0:
                ratios.append(ours_duration / theirs_duration)
        elif ok:
            osrm_only += 1
            disagreements.append((index, lon1, lat1, lon2, lat2, -1, theirs_distance, -1, theirs_duration))
        elif ours:
            enroute_only += 1
        else:
            neither += 1
    with open(sys.argv[3], "w") as out:
        out.write("pair\tlon1\tlat1\tlon2\tlat2\tenroute_m\tosrm_m\tenroute_s\tosrm_s\n")
        for row in disagreements:
            out.write("\t".join(str(value) for value in row) + "\n")
    print("RESULT " + json.dumps({
        "pairs": len(pairs), "both": both, "osrm_p50_ms": percentile(times, 0.5), "osrm_p99_ms": percentile(times, 0.99),
        "osrm_cpu_p50_ms": percentile(cpu_times, 0.5), "osrm_cpu_p99_ms": percentile(cpu_times, 0.99),
        "osrm_cpu_mean_ms": sum(cpu_times) / len(cpu_times) if cpu_times else 0.0,
        "within1": within1 / both if both else 0, "within5": within5 / both if both else 0,
        "over5": both - within5, "over5_near_ties": near_ties,
        "ratio_p10": percentile(ratios, 0.1), "ratio_p50": percentile(ratios, 0.5), "ratio_p90": percentile(ratios, 0.9),
        "osrm_failures_enroute_ok": enroute_only, "enroute_failures_osrm_ok": osrm_only, "both_fail": neither,
    }, sort_keys=True))


if __name__ == "__main__":
    main()
