public import EnRouteRoads
public import Foundation
import RoadBuilder
import Routing

/// Road networks built from the OSM extracts shipped in `data/osm/`, once per test run and off the cooperative pool.
public enum TestRoads {
    /// The repository's `data/osm/` folder.
    public static let extractsFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("data/osm")

    private static let cache = SharedFixture<String, LocalRoadRouting> { file in
        let (network, _) = try RoadNetworkBuilder.build(osm: extractsFolder.appendingPathComponent(file).path)
        return LocalRoadRouting(graph: .init(network: network))
    }

    /// Routing on `data/osm/<file>` (built on first use, then shared; each call may `replace` its graph, so a test
    /// that changes weights should build its own with `fresh`).
    public static func shared(_ file: String) async throws -> LocalRoadRouting { try await cache.value(file) }

    /// Central Helsinki (Kluuvi, Kaartinkaupunki, Kamppi; lon 24.935–24.953, lat 60.164–60.179), shared.
    public static func helsinki() async throws -> LocalRoadRouting { try await shared("Helsinki-clean.osm.pbf") }

    /// A new router on `data/osm/<file>`, for a test that changes its weights.
    public static func fresh(_ file: String) async throws -> LocalRoadRouting {
        try await offThePool {
            let (network, _) = try RoadNetworkBuilder.build(osm: extractsFolder.appendingPathComponent(file).path)
            return LocalRoadRouting(graph: .init(network: network))
        }
    }
}
