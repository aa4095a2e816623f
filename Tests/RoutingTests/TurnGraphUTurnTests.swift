import Routing
import Testing

/// Where the turn graph lets a car turn back: at a dead end and at a junction, never at a node in the middle of
/// a street (a crossing or signal that splits it), where OSRM cannot turn either.
@Suite struct TurnGraphUTurnTests {
    @Test func aUTurnIsAllowedAtADeadEndAndAJunctionButNotMidStreet() {
        var network = RoadNetwork()
        // 0 — 1 — 2 along a street, 1 a crossing in its middle; 2 a junction with 3 (a dead end) and 4.
        network.addNode(id: 0, lat: 60.0000, lon: 25.000)
        network.addNode(id: 1, lat: 60.0000, lon: 25.001, delaySeconds: 1)
        network.addNode(id: 2, lat: 60.0000, lon: 25.002)
        network.addNode(id: 3, lat: 60.0000, lon: 25.003)
        network.addNode(id: 4, lat: 60.0010, lon: 25.002)
        for (a, b) in [(0, 1), (1, 2), (2, 3), (2, 4)] as [(Int32, Int32)] { network.road(a, b, seconds: 10) }
        let graph = EdgeBasedGraph(network: network)
        func hasTurn(_ from: Int32, _ to: Int32) -> Bool {
            (Int(graph.firstArc[Int(from)])..<Int(graph.firstArc[Int(from) + 1])).contains { graph.arcHead[$0] == to }
        }
        #expect(!hasTurn(network.edge(0, 1), network.edge(1, 0)), "no U-turn at the mid-street crossing")
        #expect(hasTurn(network.edge(0, 1), network.edge(1, 2)))
        #expect(hasTurn(network.edge(2, 3), network.edge(3, 2)), "a dead end turns back")
        #expect(hasTurn(network.edge(1, 2), network.edge(2, 1)), "a junction turns back")
    }
}
