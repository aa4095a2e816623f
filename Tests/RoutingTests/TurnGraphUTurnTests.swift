import Routing
import Testing

/// Where the turn graph lets a car turn back, as OSRM's car does: at a dead end and where no other road leads in,
/// never at a node in the middle of a street (a crossing or signal that splits it) nor at a junction with other
/// ways in and out.
@Suite struct TurnGraphUTurnTests {
    @Test func aUTurnIsAllowedAtADeadEndButNotMidStreetNorAtAJunction() {
        var network = RoadNetwork()
        // 0 — 1 — 2 along a street, 1 a crossing in its middle; 2 a junction with 3 (a dead end) and 4.
        network.addNode(id: 0, lat: 60.0000, lon: 25.000)
        network.addNode(id: 1, lat: 60.0000, lon: 25.001, delaySeconds: 1)
        network.addNode(id: 2, lat: 60.0000, lon: 25.002)
        network.addNode(id: 3, lat: 60.0000, lon: 25.003)
        network.addNode(id: 4, lat: 60.0010, lon: 25.002)
        for (a, b) in [(0, 1), (1, 2), (2, 3), (2, 4)] as [(Int32, Int32)] { network.road(a, b, seconds: 10) }
        let graph = EdgeBasedGraph(network: network)
        #expect(!graph.hasTurn(network.edge(0, 1), network.edge(1, 0)), "no U-turn at the mid-street crossing")
        #expect(graph.hasTurn(network.edge(0, 1), network.edge(1, 2)))
        #expect(graph.hasTurn(network.edge(2, 3), network.edge(3, 2)), "a dead end turns back")
        #expect(!graph.hasTurn(network.edge(1, 2), network.edge(2, 1)), "a junction with other ways on does not")
    }

    @Test func aUTurnIsAllowedWhereTheRestrictionsLeaveNoOtherWayOn() {
        var network = RoadNetwork()
        // 0 — 1 with 2 and 3 off 1; from 0 → 1 a car may only turn back (no left, no right).
        network.addNode(id: 0, lat: 60.0000, lon: 25.000)
        network.addNode(id: 1, lat: 60.0000, lon: 25.001)
        network.addNode(id: 2, lat: 60.0010, lon: 25.001)
        network.addNode(id: 3, lat: 59.9990, lon: 25.001)
        for (a, b) in [(0, 1), (1, 2), (1, 3)] as [(Int32, Int32)] { network.road(a, b, seconds: 10) }
        network.addRestriction(
            TurnRestriction(fromEdge: network.edge(0, 1), viaNode: 1, toEdge: network.edge(1, 2), kind: .no))
        network.addRestriction(
            TurnRestriction(fromEdge: network.edge(0, 1), viaNode: 1, toEdge: network.edge(1, 3), kind: .no))
        let graph = EdgeBasedGraph(network: network)
        #expect(graph.hasTurn(network.edge(0, 1), network.edge(1, 0)), "turning back is the one way on")
        #expect(!graph.hasTurn(network.edge(2, 1), network.edge(1, 2)), "from 2 the way on to 0 or 3 is open")
    }
}

extension EdgeBasedGraph {
    /// Whether the turn graph has the turn from edge `from` onto edge `to`.
    func hasTurn(_ from: Int32, _ to: Int32) -> Bool {
        (Int(firstArc[Int(from)])..<Int(firstArc[Int(from) + 1])).contains { arcHead[$0] == to }
    }
}
