// The router's benchmark harness.
// - `grid` (bench/routing-grid.sh): the seeded random grid RoutingTests use (RoadNetwork.randomGrid), the edge-based
//   graph and contraction hierarchy build timed with peak RSS, then random pairs through CHQuery and DijkstraRouter
//   in the same run (the reference), with the weight mismatch count.
// - `city` (bench/routing.sh): a synthetic city written as OSM PBF (City.swift).
// - `pairs` (bench/routing.sh): random pairs on a graph file routed in process, checked against Dijkstra, and
//   written out for the OSRM side of the comparison (Pairs.swift).
import Foundation
import Routing

/// Peak resident set size in MiB (VmHWM), or 0 where /proc is missing.
func peakRSSMiB() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let kilobytes = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
        return kilobytes / 1024
    }
    return 0
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

func usage() -> Never {
    FileHandle.standardError.write(
        Data(
            """
            usage: routing-bench grid --size N [--pairs P] [--seed S]
                   routing-bench city --nodes N --out FILE.osm.pbf [--seed S]
                   routing-bench pairs --graph FILE.graph [--pairs P] [--seed S] [--check C] [--out FILE.tsv] \
            [--customize]
                   routing-bench diagnose --graph FILE.graph LON1 LAT1 LON2 LAT2

            """.utf8))
    exit(64)
}

var arguments = CommandLine.arguments.dropFirst().makeIterator()
switch arguments.next() {
case "grid": runGrid(&arguments)
case "city": runCity(&arguments)
case "pairs": runPairs(&arguments)
case "diagnose": runDiagnose(&arguments)
default: usage()
}

func runGrid(_ arguments: inout IndexingIterator<ArraySlice<String>>) {
    var size = 60, pairCount = 1000
    var seed: UInt64 = 1
    while let argument = arguments.next() {
        switch argument {
        case "--size": guard let value = arguments.next().flatMap({ Int($0) }) else { usage() }; size = value
        case "--pairs": guard let value = arguments.next().flatMap({ Int($0) }) else { usage() }; pairCount = value
        case "--seed": guard let value = arguments.next().flatMap({ UInt64($0) }) else { usage() }; seed = value
        default: usage()
        }
    }

    let clock = ContinuousClock()
    let network = RoadNetwork.randomGrid(rows: size, columns: size, seed: seed)
    var graph: EdgeBasedGraph!
    let graphTime = clock.measure { graph = EdgeBasedGraph(network: network) }
    var hierarchy: ContractionHierarchy!
    // Witness-search bounds from the environment, for tuning (the defaults otherwise).
    var chOptions = ContractionHierarchy.Options()
    let environment = ProcessInfo.processInfo.environment
    if let value = environment["CH_EST_HOPS"].flatMap({ Int($0) }) { chOptions.estimateHopLimit = value }
    if let value = environment["CH_EST_SETTLE"].flatMap({ Int($0) }) { chOptions.estimateSettleLimit = value }
    if let value = environment["CH_SETTLE"].flatMap({ Int($0) }) { chOptions.witnessSettleLimit = value }
    if let value = environment["CH_STALE"].flatMap({ Int32($0) }) { chOptions.maxStaleness = value }
    if let value = environment["CH_HOPS"].flatMap({ Int($0) }) { chOptions.witnessHopLimit = value }
    let contractTime = clock.measure { hierarchy = ContractionHierarchy(graph: graph, options: chOptions) }
    let rss = peakRSSMiB()
    let upArcs = hierarchy.upArcCount, downArcs = hierarchy.downArcCount
    print(
        "grid \(size)x\(size) seed \(seed): \(network.nodeCount) junctions, \(network.edgeCount) road edges, "
            + "\(graph.arcCount) turns"
    )
    print(
        String(
            format: "build: graph %.3f s, contraction %.3f s, total %.3f s; peak RSS %.0f MiB",
            seconds(graphTime), seconds(contractTime), seconds(graphTime + contractTime), rss))
    print(
        String(
            format: "hierarchy: %d shortcuts (%.2f per turn), %d up + %d down arcs",
            hierarchy.shortcutCount, Double(hierarchy.shortcutCount) / Double(max(1, graph.arcCount)), upArcs, downArcs)
    )

    let query = CHQuery(hierarchy: hierarchy)
    let dijkstra = DijkstraRouter(graph: graph)
    var random = SeededGenerator(seed: seed &* 7919)
    var chTimes: [Double] = [], dijkstraTimes: [Double] = []
    chTimes.reserveCapacity(pairCount); dijkstraTimes.reserveCapacity(pairCount)
    var mismatches = 0, unreachable = 0
    var chCPU: UInt64 = 0, dijkstraCPU: UInt64 = 0
    for _ in 0..<pairCount {
        let from = Int32.random(in: 0..<Int32(network.nodeCount), using: &random)
        let to = Int32.random(in: 0..<Int32(network.nodeCount), using: &random)
        var chPath: RoadPath?, reference: RoadPath?
        let cpu0 = threadCPUNanoseconds()
        chTimes.append(seconds(clock.measure { chPath = query.route(fromNode: from, toNode: to, in: graph) }) * 1000)
        let cpu1 = threadCPUNanoseconds()
        dijkstraTimes.append(seconds(clock.measure { reference = dijkstra.route(fromNode: from, toNode: to) }) * 1000)
        chCPU += cpu1 - cpu0
        dijkstraCPU += threadCPUNanoseconds() - cpu1
        if chPath?.weight != reference?.weight { mismatches += 1 }
        if reference == nil { unreachable += 1 }
    }
    chTimes.sort(); dijkstraTimes.sort()
    let chP50 = percentile(chTimes, 0.5), chP99 = percentile(chTimes, 0.99)
    let dP50 = percentile(dijkstraTimes, 0.5), dP99 = percentile(dijkstraTimes, 0.99)
    print(
        String(
            format: "query (%d pairs, %d unreachable): CH p50 %.3f ms p99 %.3f ms; Dijkstra p50 %.3f ms p99 %.3f ms",
            pairCount, unreachable, chP50, chP99, dP50, dP99))
    print(
        String(
            format: "speed-up CH vs Dijkstra: p50 %.1fx, p99 %.1fx", dP50 / max(chP50, 1e-9), dP99 / max(chP99, 1e-9)))
    printQueryCPU(ch: chCPU, dijkstra: dijkstraCPU, queries: pairCount)
    print("mismatches: \(mismatches)")
    if mismatches > 0 { exit(1) }
}

/// The cost per query of each kind: the thread's CPU nanoseconds over all of them, over their count.
func printQueryCPU(ch: UInt64, dijkstra: UInt64, queries: Int) {
    let perQuery = { (nanoseconds: UInt64) in Double(nanoseconds) / 1e3 / Double(max(1, queries)) }
    print(
        String(
            format: "CPU per query (this thread's, user + system): CH %.1f us, Dijkstra %.1f us: Dijkstra / CH %.1fx",
            perQuery(ch), perQuery(dijkstra), perQuery(dijkstra) / max(perQuery(ch), 1e-9)))
}
