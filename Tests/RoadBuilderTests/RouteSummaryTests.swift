import Foundation
import TestSupport
import Testing
@testable import Routing

/// A summary route (no geometry, no steps) against the full route between the same coordinates on real extracts.
@Suite struct RouteSummaryTests {
    @Test(arguments: ["Helsinki-clean.osm.pbf", "kotka-clean.osm.pbf"])
    func aSummaryHasTheFullRoutesDistanceWeightAndEndsOnManyPairs(file: String) async throws {
        let built = try await RoutingParts.cache.value(file)
        let (compared, problems) = try await offThePool { () -> (Int, [String]) in
            let parts = built.parts
            let router = RoadRouter(
                network: parts.network, graph: parts.graph, hierarchy: parts.hierarchy, snapper: parts.snapper)
            let network = parts.network
            var generator = SeededGenerator(seed: 4242)
            var compared = 0, found: [String] = []
            for _ in 0..<1000 {
                let a = network.coordinate(ofNode: Int32.random(in: 0..<Int32(network.nodeCount), using: &generator))
                let b = network.coordinate(ofNode: Int32.random(in: 0..<Int32(network.nodeCount), using: &generator))
                // Off the nodes, so both ends are part-way along their edges.
                let from = RoadCoordinate(
                    lat: a.lat + Double.random(in: -0.0002...0.0002, using: &generator), lon: a.lon + 0.0001)
                let to = RoadCoordinate(
                    lat: b.lat + 0.0001, lon: b.lon + Double.random(in: -0.0003...0.0003, using: &generator))
                guard let full = try? router.route(from: from, to: to) else { continue }
                let summary = try router.route(from: from, to: to, detail: .summary)
                compared += 1
                if abs(summary.distanceMeters - full.distanceMeters) > 0.01 || summary.weight != full.weight
                    || summary.durationSeconds != full.durationSeconds || summary.start != full.start
                    || summary.end != full.end
                    || summary.edges != full.edges || !summary.geometry.isEmpty || !summary.steps.isEmpty
                {
                    found.append(
                        "\(from) → \(to): full \(full.distanceMeters) m \(full.weight), summary "
                            + "\(summary.distanceMeters) m \(summary.weight)"
                    )
                }
                // The full route's distance is its geometry's length and its steps' sum.
                if abs(RoadNetwork.length(of: full.geometry) - full.distanceMeters) > 0.01
                    || abs(full.steps.reduce(0) { $0 + $1.distanceMeters } - full.distanceMeters) > 0.01
                {
                    found.append(
                        "\(from) → \(to): full route's geometry or steps do not add up to \(full.distanceMeters) m")
                }
            }
            return (compared, found)
        }
        #expect(compared > 500)
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }
}
