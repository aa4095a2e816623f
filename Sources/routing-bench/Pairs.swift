// `routing-bench city` and `routing-bench pairs`, for bench/routing.sh.
import Foundation
import Routing

func runCity(_ arguments: inout IndexingIterator<ArraySlice<String>>) {
    var nodes = 1_000_000, seed: UInt64 = 1, out: String?
    while let argument = arguments.next() {
        switch argument {
        case "--nodes":
            guard let value = arguments.next().flatMap({ Int($0) }), value > 0 else { usage() }; nodes = value
        case "--seed": guard let value = arguments.next().flatMap({ UInt64($0) }) else { usage() }; seed = value
        case "--out": guard let value = arguments.next() else { usage() }; out = value
        default: usage()
        }
    }
    guard let out else { usage() }
    let clock = ContinuousClock()
    var report = CityReport()
    do {
        let time = try clock.measure { report = try CityGenerator.write(targetNodes: nodes, seed: seed, to: out) }
        print(
            String(
                format:
                    "city seed %llu: %d road nodes (%d junctions), %d ways, %d restrictions written to %@ in %.1f s",
                seed, report.nodes, report.junctions, report.ways, report.relations, out, seconds(time)))
    } catch {
        FileHandle.standardError.write(Data("routing-bench city: \(error)\n".utf8))
        exit(1)
    }
}

/// This thread's CPU time in nanoseconds: a query's cost without the time other processes held the core.
func threadCPUNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// Random pairs of network nodes on a graph file: each routed between the nodes' coordinates by the RoadRouter (snap,
/// hierarchy, geometry and steps: what a request costs) and node to node by the bare CHQuery; afterwards, in a pass
/// of its own, the first `check` of them against Dijkstra. Writes one line per pair (`lon1 lat1 lon2 lat2 distance_m
/// duration_s`, `-` where
/// there is no route) and prints a `RESULT` JSON line.
func runPairs(_ arguments: inout IndexingIterator<ArraySlice<String>>) {
    let options = PairsOptions(&arguments)
    let clock = ContinuousClock()
    let (loaded, loadTime) = loadGraph(options.path, clock: clock)
    let network = loaded.network, graph = loaded.graph, hierarchy = loaded.hierarchy
    let loadRSS = peakRSSMiB()
    var facts: [String: Any] = [
        "graph": options.path, "nodes": network.nodeCount, "edges": network.edgeCount, "turns": graph.arcCount,
        "shortcuts": hierarchy.shortcutCount, "load_s": seconds(loadTime), "load_rss_mib": loadRSS,
        "hierarchy_stored": loaded.hierarchyWasStored,
    ]
    if options.customize {
        facts.merge(measureCustomization(loaded, seed: options.seed, check: options.check, clock: clock)) { $1 }
    }
    let router = RoadRouter(network: network, graph: graph, hierarchy: hierarchy)
    let query = CHQuery(hierarchy: hierarchy), dijkstra = DijkstraRouter(graph: graph)
    let timed = timePairs(router: router, query: query, options: options, clock: clock)
    // The check against Dijkstra in a pass of its own: a Dijkstra search sweeps much of the graph through the caches,
    // and between timed queries it would leave each next query colder than any stream of requests does.
    var mismatches = 0
    for (a, b) in timed.checkedPairs
    where dijkstra.route(fromNode: a, toNode: b)?.weight != query.route(fromNode: a, toNode: b, in: graph)?.weight {
        mismatches += 1
    }
    if let out = options.out {
        FileManager.default.createFile(atPath: out, contents: Data((timed.lines.joined(separator: "\n") + "\n").utf8))
    }
    facts.merge(timed.facts) { $1 }
    facts["pairs"] = options.pairCount
    facts["dijkstra_mismatches"] = mismatches
    facts["peak_rss_mib"] = peakRSSMiB()
    let json = try! JSONSerialization.data(withJSONObject: facts, options: [.sortedKeys])
    print("RESULT " + String(decoding: json, as: UTF8.self))
    if mismatches > 0 || (facts["customize_mismatches"] as? Int ?? 0) > 0 { exit(1) }
}

/// `routing-bench pairs`'s flags.
struct PairsOptions {
    var path: String
    var out: String?
    var pairCount = 10_000
    var seed: UInt64 = 1
    var check = Int.max
    var customize = false

    /// The flags from `arguments`; the usage and exit 64 on anything else, or without `--graph`.
    init(_ arguments: inout IndexingIterator<ArraySlice<String>>) {
        var path: String?
        while let argument = arguments.next() {
            switch argument {
            case "--graph": guard let value = arguments.next() else { usage() }; path = value
            case "--out": guard let value = arguments.next() else { usage() }; out = value
            case "--pairs": guard let value = arguments.next().flatMap({ Int($0) }) else { usage() }; pairCount = value
            case "--seed": guard let value = arguments.next().flatMap({ UInt64($0) }) else { usage() }; seed = value
            case "--check": guard let value = arguments.next().flatMap({ Int($0) }) else { usage() }; check = value
            case "--customize": customize = true
            default: usage()
            }
        }
        guard let path else { usage() }
        self.path = path
    }
}

/// The graph file at `path` and how long it took to load; exits 1 when it cannot be loaded.
func loadGraph(_ path: String, clock: ContinuousClock) -> (RoadGraphFile.Loaded, Duration) {
    var loaded: RoadGraphFile.Loaded!
    let loadTime: Duration
    do {
        loadTime = try clock.measure {
            loaded = try RoadGraphFile.load(path, log: { FileHandle.standardError.write(Data("\($0)\n".utf8)) })
        }
    } catch {
        FileHandle.standardError.write(Data("routing-bench pairs: \(error)\n".utf8))
        exit(1)
    }
    return (loaded, loadTime)
}

/// Live speeds: a seeded tenth of the edges slowed threefold, the hierarchy re-contracted in its order, timed
/// against a fresh contraction and checked on up to 300 random pairs against Dijkstra.
func measureCustomization(
    _ loaded: RoadGraphFile.Loaded, seed: UInt64, check: Int, clock: ContinuousClock
) -> [String: Any] {
    let network = loaded.network, graph = loaded.graph, hierarchy = loaded.hierarchy
    var random = SeededGenerator(seed: seed &+ 99)
    let durations = network.edgeDurationSeconds.map { Double.random(in: 0..<1, using: &random) < 0.1 ? $0 * 3 : $0 }
    var reweighted: EdgeBasedGraph!, customized: ContractionHierarchy!
    let reweightTime = clock.measure { reweighted = graph.reweighted(edgeDurations: durations) }
    var options = ContractionHierarchy.Options()
    if let value = ProcessInfo.processInfo.environment["CH_SETTLE"].flatMap({ Int($0) }) {
        options.witnessSettleLimit = value
    }
    if let value = ProcessInfo.processInfo.environment["CH_HOPS"].flatMap({ Int($0) }) {
        options.witnessHopLimit = value
    }
    let customizeTime = clock.measure { customized = hierarchy.customized(graph: reweighted, options: options) }
    let fresh = clock.measure { _ = ContractionHierarchy(graph: reweighted) }
    let query = CHQuery(hierarchy: customized), dijkstra = DijkstraRouter(graph: reweighted)
    var mismatches = 0
    for _ in 0..<min(check, 300) {
        let from = Int32.random(in: 0..<Int32(network.nodeCount), using: &random)
        let to = Int32.random(in: 0..<Int32(network.nodeCount), using: &random)
        if query.route(fromNode: from, toNode: to, in: reweighted)?.weight
            != dijkstra.route(fromNode: from, toNode: to)?.weight
        {
            mismatches += 1
        }
    }
    return [
        "customized_shortcuts": customized.shortcutCount, "reweight_s": seconds(reweightTime),
        "customize_s": seconds(customizeTime), "fresh_contraction_s": seconds(fresh),
        "customize_mismatches": mismatches,
    ]
}

/// The timed pass over the pairs: each pair's output line, the pairs to check against Dijkstra, and the timing
/// facts.
struct TimedPairs {
    var lines: [String] = []
    var checkedPairs: [(Int32, Int32)] = []
    var facts: [String: Any] = [:]
}

/// Each random pair routed coordinate to coordinate (also timed as its two halves: snapping, then the route between
/// the snaps) and node to node by the bare CHQuery.
func timePairs(router: RoadRouter, query: CHQuery, options: PairsOptions, clock: ContinuousClock) -> TimedPairs {
    let network = router.network, graph = router.graph
    var random = SeededGenerator(seed: options.seed)
    var routeCPUTimes: [Double] = []
    var routeTimes: [Double] = [], queryTimes: [Double] = [], snapTimes: [Double] = [], assembleTimes: [Double] = []
    var timed = TimedPairs()
    var failures = 0
    for index in 0..<options.pairCount {
        let a = Int32.random(in: 0..<Int32(network.nodeCount), using: &random)
        let b = Int32.random(in: 0..<Int32(network.nodeCount), using: &random)
        let from = RoadCoordinate(lat: network.nodeLats[Int(a)], lon: network.nodeLons[Int(a)])
        let to = RoadCoordinate(lat: network.nodeLats[Int(b)], lon: network.nodeLons[Int(b)])
        var route: RoadRoute?
        let cpuStart = threadCPUNanoseconds()
        routeTimes.append(seconds(clock.measure { route = try? router.route(from: from, to: to) }) * 1000)
        routeCPUTimes.append(Double(threadCPUNanoseconds() - cpuStart) / 1e6)
        // The same request in its two halves: snapping both ends, then the route between the snaps.
        var snaps: ([EdgeSnap], [EdgeSnap])?
        snapTimes.append(
            seconds(clock.measure { snaps = try? (router.endpoints(from), router.endpoints(to, index: 1)) }) * 1000)
        if let snaps {
            assembleTimes.append(seconds(clock.measure { _ = router.route(from: snaps.0, to: snaps.1) }) * 1000)
        }
        queryTimes.append(seconds(clock.measure { _ = query.route(fromNode: a, toNode: b, in: graph) }) * 1000)
        if index < options.check { timed.checkedPairs.append((a, b)) }
        let ends = String(format: "%.7f\t%.7f\t%.7f\t%.7f", from.lon, from.lat, to.lon, to.lat)
        if let route {
            timed.lines.append(ends + String(format: "\t%.1f\t%.1f", route.distanceMeters, route.durationSeconds))
        } else {
            failures += 1
            timed.lines.append(ends + "\t-\t-")
        }
    }
    routeCPUTimes.sort(); routeTimes.sort(); queryTimes.sort(); snapTimes.sort(); assembleTimes.sort()
    timed.facts = [
        "route_cpu_p50_ms": percentile(routeCPUTimes, 0.5), "route_cpu_p99_ms": percentile(routeCPUTimes, 0.99),
        // The cost per route: this thread's CPU time over every route, over their count.
        "route_cpu_mean_ms": routeCPUTimes.reduce(0, +) / Double(max(1, routeCPUTimes.count)),
        "snap_p50_ms": percentile(snapTimes, 0.5), "snap_p99_ms": percentile(snapTimes, 0.99),
        "route_from_snaps_p50_ms": percentile(assembleTimes, 0.5),
        "route_from_snaps_p99_ms": percentile(assembleTimes, 0.99),
        "failures": failures,
        "route_p50_ms": percentile(routeTimes, 0.5), "route_p99_ms": percentile(routeTimes, 0.99),
        "ch_p50_ms": percentile(queryTimes, 0.5), "ch_p99_ms": percentile(queryTimes, 0.99),
        "dijkstra_checked": timed.checkedPairs.count,
    ]
    return timed
}

/// `routing-bench diagnose --graph G LON1 LAT1 LON2 LAT2`: why a pair has no route or an unexpected one: the
/// snapped edges (name, OSM node ids), how many edges each end reaches forward and is reached from backward.
func runDiagnose(_ arguments: inout IndexingIterator<ArraySlice<String>>) {
    guard arguments.next() == "--graph", let path = arguments.next() else { usage() }
    var numbers: [Double] = []
    while let value = arguments.next().flatMap(Double.init) { numbers.append(value) }
    guard numbers.count == 4, let loaded = try? RoadGraphFile.load(path) else { usage() }
    let network = loaded.network, graph = loaded.graph
    let router = RoadRouter(network: network, graph: graph, hierarchy: loaded.hierarchy)
    // Edges reachable from `start` over turns, forward or (reversed turns) backward.
    var reverseArcs = [[Int32]](repeating: [], count: graph.nodeCount)
    for tail in 0..<graph.nodeCount {
        for arc in Int(graph.firstArc[tail])..<Int(graph.firstArc[tail + 1]) {
            reverseArcs[Int(graph.arcHead[arc])].append(Int32(tail))
        }
    }
    func reach(_ start: Int32, forward: Bool) -> Set<Int32> {
        var seen: Set<Int32> = [start], stack = [start]
        while let edge = stack.popLast() {
            let next =
                forward
                ? (Int(graph.firstArc[Int(edge)])..<Int(graph.firstArc[Int(edge) + 1])).map { graph.arcHead[$0] }
                : reverseArcs[Int(edge)]
            for other in next where seen.insert(other).inserted { stack.append(other) }
        }
        return seen
    }
    for (index, (lon, lat)) in [(numbers[0], numbers[1]), (numbers[2], numbers[3])].enumerated() {
        guard let snaps = try? router.endpoints(RoadCoordinate(lat: lat, lon: lon), index: index) else {
            print("end \(index): no segment"); continue
        }
        for snap in snaps {
            let edge = Int(snap.edge)
            print(
                "end \(index): edge \(edge) '\(network.name(ofEdge: snap.edge))' OSM "
                    + "\(network.nodeIDs[Int(network.edgeFrom[edge])]) → "
                    + "\(network.nodeIDs[Int(network.edgeTo[edge])]), "
                    + "\(String(format: "%.1f", snap.distanceMeters)) m off; reaches "
                    + "\(reach(snap.edge, forward: true).count) edges, reached from "
                    + "\(reach(snap.edge, forward: false).count) of \(graph.nodeCount)"
            )
        }
    }
    if let route = try? router.route(
        from: RoadCoordinate(lat: numbers[1], lon: numbers[0]), to: RoadCoordinate(lat: numbers[3], lon: numbers[2]))
    {
        print(
            String(format: "route: %.1f m, %.1f s; ", route.distanceMeters, route.durationSeconds)
                + route.steps.map {
                    "\($0.type.rawValue) \($0.modifier?.rawValue ?? "") '\($0.name)' \(Int($0.distanceMeters)) m"
                }.joined(separator: " | "))
        print(
            "OSM nodes: "
                + route.edges.map { String(network.nodeIDs[Int(network.edgeFrom[Int($0)])]) }.joined(separator: " "))
    } else {
        print("route: none")
    }
}
