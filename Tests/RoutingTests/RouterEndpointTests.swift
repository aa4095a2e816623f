import Routing
import Testing

/// Where a coordinate snaps when the nearest road is not the whole story: a junction (every road meeting there
/// is a start) and a road cut off from the rest (the route falls back to the connected road nearby, as OSRM does).
@Suite struct RouterEndpointTests {
    /// A square block about 111 m a side: 0 (SW), 1 (SE), 2 (NE), 3 (NW), two-way except where a test says.
    static func square(_ network: inout RoadNetwork) {
        network.addNode(id: 0, lat: 60.000, lon: 25.000)
        network.addNode(id: 1, lat: 60.000, lon: 25.002)
        network.addNode(id: 2, lat: 60.001, lon: 25.002)
        network.addNode(id: 3, lat: 60.001, lon: 25.000)
    }

    @Test func aCoordinateOnAJunctionStartsOnTheDirectRoadNotTheFirstEdgeIndexed() throws {
        var network = RoadNetwork()
        Self.square(&network)
        // The one-way 1 → 0 is edge 0, so it wins the snapper's tie at node 1 by index.
        network.road(1, 0, seconds: 20, oneWay: true)
        network.road(1, 2, seconds: 10)
        network.road(2, 3, seconds: 20)
        network.road(3, 0, seconds: 10)
        let router = RoadRouter(network: network)
        let route = try router.route(from: network.coordinate(ofNode: 1), to: network.coordinate(ofNode: 2))
        // Straight up the east side (about 111 m), not round by 0 and 3 (about 333 m).
        #expect(route.distanceMeters < 150, "took \(route.distanceMeters) m")
        #expect(route.start.edge == network.edge(1, 2))
    }

    @Test func aCoordinateBesideARoadNothingReachesRoutesFromTheConnectedRoadNearby() throws {
        var network = RoadNetwork()
        Self.square(&network)
        network.road(0, 1, seconds: 10)
        network.road(1, 2, seconds: 10)
        network.road(2, 3, seconds: 10)
        network.road(3, 0, seconds: 10)
        // A one-way about 17 m west of the 0–3 side that nothing leads into (its start has no way in), joining at 3.
        let start = network.addNode(id: 4, lat: 60.0002, lon: 24.9997)
        let end = network.addNode(id: 5, lat: 60.0008, lon: 24.9997)
        network.road(start, end, seconds: 8, oneWay: true)
        network.road(end, 3, seconds: 3, oneWay: true)
        let router = RoadRouter(network: network)
        let beside = RoadCoordinate(lat: 60.0005, lon: 24.99972)
        // Its nearest road is the cut-off one-way; the route ends on the 0–3 side instead of failing.
        let route = try router.route(from: network.coordinate(ofNode: 1), to: beside)
        #expect(route.end.edge == network.edge(0, 3) || route.end.edge == network.edge(3, 0))
        #expect(route.distanceMeters > 100 && route.distanceMeters < 200, "took \(route.distanceMeters) m")
        // From the one-way itself the route still starts where the coordinate is, since it can be left.
        let away = try router.route(from: beside, to: network.coordinate(ofNode: 1))
        #expect(away.start.edge == network.edge(start, end))
    }
}
