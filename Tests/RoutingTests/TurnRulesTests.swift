import Routing
import Testing

/// Hand-built junctions where one-ways, restrictions and U-turn costs force a detour, on the hierarchy and on
/// Dijkstra alike.
@Suite struct TurnRulesTests {
    /// A plus-shaped junction X with arms W, N, E, S and a ring N–NE–E–SE–S east of it, every street 10 s both
    /// ways, U-turns 100 s and no other turn costs: the only ways around a forbidden turn go east.
    private func makeJunction(
        _ restriction: ((RoadNetwork) -> TurnRestriction)? = nil
    )
        -> (routers: Routers, names: [String: Int32])
    {
        var network = RoadNetwork(turnCosts: TurnCosts(uTurnSeconds: 100) { _ in 0 })
        let layout: [(String, Double, Double)] = [
            ("X", 1, 1), ("W", 1, 0), ("N", 2, 1), ("E", 1, 2), ("S", 0, 1),
            ("NE", 2, 2), ("SE", 0, 2),
        ]
        var names: [String: Int32] = [:]
        for (index, (name, row, column)) in layout.enumerated() {
            names[name] = network.addNode(id: Int64(index), lat: 60 + row * 0.001, lon: 25 + column * 0.002)
        }
        for (a, b) in [
            ("W", "X"), ("N", "X"), ("E", "X"), ("S", "X"), ("N", "NE"), ("NE", "E"), ("E", "SE"), ("SE", "S"),
        ] {
            network.road(names[a]!, names[b]!, seconds: 10)
        }
        if let restriction { network.addRestriction(restriction(network)) }
        return (Routers(network), names)
    }

    private func expectRoute(
        _ routers: Routers, _ names: [String: Int32], from: String, to: String,
        passes expected: [String], seconds: Double
    ) throws {
        let found = routers.route(names[from]!, names[to]!)
        let path = try #require(found, "no route \(from) → \(to)")
        let byIndex = Dictionary(uniqueKeysWithValues: names.map { ($1, $0) })
        #expect(routers.nodes(of: path).map { byIndex[$0]! } == expected)
        #expect(path.durationSeconds == seconds)
        #expect(routers.dijkstra.route(fromNode: names[from]!, toNode: names[to]!)?.weight == path.weight)
    }

    @Test func withoutRestrictionsTheRouteTurnsStraightAtTheJunction() throws {
        let (routers, names) = makeJunction()
        try expectRoute(routers, names, from: "W", to: "N", passes: ["W", "X", "N"], seconds: 20)
    }

    @Test func aNoTurnRestrictionSendsTheRouteAroundTheRing() throws {
        let (routers, names) = makeJunction { network in
            let x = Int32(0), w = Int32(1), n = Int32(2)
            return TurnRestriction(fromEdge: network.edge(w, x), viaNode: x, toEdge: network.edge(x, n), kind: .no)
        }
        try expectRoute(routers, names, from: "W", to: "N", passes: ["W", "X", "E", "NE", "N"], seconds: 40)
        // The restriction binds only that turn: from S the left turn into N is still straight on.
        try expectRoute(routers, names, from: "S", to: "N", passes: ["S", "X", "N"], seconds: 20)
    }

    @Test func anOnlyStraightOnRestrictionForbidsEveryOtherTurn() throws {
        let (routers, names) = makeJunction { network in
            let x = Int32(0), w = Int32(1), e = Int32(3)
            return TurnRestriction(fromEdge: network.edge(w, x), viaNode: x, toEdge: network.edge(x, e), kind: .only)
        }
        try expectRoute(routers, names, from: "W", to: "S", passes: ["W", "X", "E", "SE", "S"], seconds: 40)
        try expectRoute(routers, names, from: "W", to: "N", passes: ["W", "X", "E", "NE", "N"], seconds: 40)
        try expectRoute(routers, names, from: "W", to: "E", passes: ["W", "X", "E"], seconds: 20)
    }

    @Test func aOneWayStreetIsDrivenOnlyInItsDirection() throws {
        // A square A→B one-way, B–C–D–A two-way, 10 s each: B to A goes the long way round.
        var network = RoadNetwork(turnCosts: .none)
        let a = network.addNode(id: 1, lat: 60, lon: 25), b = network.addNode(id: 2, lat: 60, lon: 25.002)
        let c = network.addNode(id: 3, lat: 60.001, lon: 25.002), d = network.addNode(id: 4, lat: 60.001, lon: 25)
        network.road(a, b, seconds: 10, oneWay: true)
        network.road(b, c, seconds: 10)
        network.road(c, d, seconds: 10)
        network.road(d, a, seconds: 10)
        let routers = Routers(network)
        let there = try #require(routers.route(a, b))
        #expect(routers.nodes(of: there) == [a, b])
        #expect(there.durationSeconds == 10)
        let back = try #require(routers.route(b, a))
        #expect(routers.nodes(of: back) == [b, c, d, a])
        #expect(back.durationSeconds == 30)
        #expect(routers.dijkstra.route(fromNode: b, toNode: a)?.weight == back.weight)
    }

    /// A street A–B (10 s) with a one-way ring B→C→D→B (3 s each) at its end and, when `stub`, a two-way dead end
    /// B–E (1 s): arriving at B and leaving back towards A drives the 9 s ring or turns back at E, the stub's end.
    private func makeTurnBack(uTurnSeconds: Double, stub: Bool = true) -> (Routers, [Int32]) {
        var network = RoadNetwork(turnCosts: TurnCosts(uTurnSeconds: uTurnSeconds) { _ in 0 })
        let a = network.addNode(id: 1, lat: 60, lon: 25), b = network.addNode(id: 2, lat: 60, lon: 25.002)
        let c = network.addNode(id: 3, lat: 60.001, lon: 25.003), d = network.addNode(id: 4, lat: 59.999, lon: 25.003)
        let e = network.addNode(id: 5, lat: 60, lon: 25.0025)
        network.road(a, b, seconds: 10)
        network.road(b, c, seconds: 3, oneWay: true)
        network.road(c, d, seconds: 3, oneWay: true)
        network.road(d, b, seconds: 3, oneWay: true)
        if stub { network.road(b, e, seconds: 1) }
        return (Routers(network), [a, b, c, d, e])
    }

    /// From the edge A→B to the edge B→A, both driven whole.
    private func turnBack(_ routers: Routers, _ nodes: [Int32]) throws -> RoadPath {
        let network = routers.network, graph = routers.graph
        let arriving = network.edge(nodes[0], nodes[1]), leaving = network.edge(nodes[1], nodes[0])
        let source = RouteEndpoint(edge: arriving, weightOffset: 0, lengthOffset: 0)
        let target = RouteEndpoint(
            edge: leaving, weightOffset: graph.edgeWeight[Int(leaving)],
            lengthOffset: Double(graph.edgeLength[Int(leaving)]))
        let path = try #require(routers.query.route(from: [source], to: [target]))
        #expect(routers.dijkstra.route(from: [source], to: [target])?.weight == path.weight)
        return path
    }

    @Test func aUTurnCostingMoreThanTheRingSendsTheRouteRoundTheRing() throws {
        let (routers, nodes) = makeTurnBack(uTurnSeconds: 20)
        let path = try turnBack(routers, nodes)
        #expect(routers.nodes(of: path) == [nodes[0], nodes[1], nodes[2], nodes[3], nodes[1], nodes[0]])
        #expect(path.durationSeconds == 29)
    }

    @Test func aCheapUTurnAtADeadEndIsTakenAndItsCostCounted() throws {
        let (routers, nodes) = makeTurnBack(uTurnSeconds: 5)
        let path = try turnBack(routers, nodes)
        #expect(routers.nodes(of: path) == [nodes[0], nodes[1], nodes[4], nodes[1], nodes[0]])
        #expect(path.durationSeconds == 27)
    }

    /// As in OSRM's car profile, a car turns back only where it has nothing else to do: not at a junction where
    /// other roads lead in and out, however cheap the U-turn.
    @Test func noUTurnIsMadeAtAJunctionWithOtherWaysOn() throws {
        let (routers, nodes) = makeTurnBack(uTurnSeconds: 0, stub: false)
        let path = try turnBack(routers, nodes)
        #expect(routers.nodes(of: path) == [nodes[0], nodes[1], nodes[2], nodes[3], nodes[1], nodes[0]])
        #expect(path.durationSeconds == 29)
    }

    /// Around a one-way block, where no other road leads into the corner, turning back is allowed.
    @Test func aUTurnIsAllowedWhereNoOtherRoadLeadsIn() throws {
        var network = RoadNetwork(turnCosts: TurnCosts(uTurnSeconds: 1) { _ in 0 })
        let a = network.addNode(id: 1, lat: 60, lon: 25), b = network.addNode(id: 2, lat: 60, lon: 25.002)
        let c = network.addNode(id: 3, lat: 60.001, lon: 25.003)
        network.road(a, b, seconds: 10)
        network.road(b, c, seconds: 3, oneWay: true)
        network.road(c, a, seconds: 30, oneWay: true)
        let routers = Routers(network)
        let path = try turnBack(routers, [a, b])
        #expect(routers.nodes(of: path) == [a, b, a])
        #expect(path.durationSeconds == 21)
    }

    @Test func theStandardTurnCostsChargeLeftTurnsMoreThanRightAndUTurnsMost() {
        let costs = TurnCosts.standard
        #expect(costs.seconds(angleDegrees: 10, isUTurn: false) < 0.1, "all but straight on is close to free")
        #expect(costs.seconds(angleDegrees: 90, isUTurn: false) < costs.seconds(angleDegrees: -90, isUTurn: false))
        #expect(
            costs.seconds(angleDegrees: -180, isUTurn: false) == CarProfile.standard.uTurnSeconds,
            "turning back is a U-turn")
        #expect(costs.seconds(angleDegrees: 0, isUTurn: true) == 27.5)
        // The numbers are the car profile's: one table for the builder and the router.
        for angle in stride(from: -170.0, through: 170, by: 5) {
            #expect(
                costs.seconds(angleDegrees: angle, isUTurn: false) == CarProfile.standard.turnCost(angleDegrees: angle))
        }
    }

    @Test func aNodeDelayIsPaidForPassingThroughTheNode() throws {
        var network = RoadNetwork(turnCosts: .none)
        let a = network.addNode(id: 1, lat: 60, lon: 25)
        let b = network.addNode(id: 2, lat: 60, lon: 25.001, delaySeconds: 15)
        let c = network.addNode(id: 3, lat: 60, lon: 25.002)
        network.road(a, b, seconds: 10)
        network.road(b, c, seconds: 10)
        let routers = Routers(network)
        #expect(routers.route(a, c)?.durationSeconds == 35)
        // Starting or ending at the signal does not pay it.
        #expect(routers.route(a, b)?.durationSeconds == 10)
        #expect(routers.route(b, c)?.durationSeconds == 10)
    }

    @Test func unreachablePairsAreAnsweredAsUnreachable() {
        // A one-way into a dead end B, and a separate street C–D.
        var network = RoadNetwork()
        let a = network.addNode(id: 1, lat: 60, lon: 25), b = network.addNode(id: 2, lat: 60, lon: 25.001)
        let c = network.addNode(id: 3, lat: 61, lon: 25), d = network.addNode(id: 4, lat: 61, lon: 25.001)
        network.road(a, b, seconds: 10, oneWay: true)
        network.road(c, d, seconds: 10)
        let routers = Routers(network)
        #expect(routers.route(a, b) != nil)
        #expect(routers.route(b, a) == nil)
        #expect(routers.route(a, c) == nil)
        #expect(routers.dijkstra.route(fromNode: b, toNode: a) == nil)
        #expect(routers.dijkstra.route(fromNode: a, toNode: d) == nil)
        let table = routers.table.table(
            sources: [a, b, c].map { routers.graph.sources(atNode: $0) },
            targets: [b, a, d].map { routers.graph.targets(atNode: $0) })
        #expect(table.durationSeconds(0, 0) == 10)
        #expect(table.durationSeconds(1, 1) == nil)
        #expect(table.durationSeconds(0, 2) == nil)
        #expect(table.durationSeconds(2, 2) == 10)
        #expect(table.distanceMeters(1, 1) == nil)
    }
}
