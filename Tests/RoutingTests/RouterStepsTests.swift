import Testing
import Routing

/// The router's maneuvers on a hand-built crossing: turns, name changes, straight on and U-turns.
@Suite struct RouterStepsTests {
    /// Degrees of latitude and longitude for 100 m at 60.17° N.
    static let north = 0.000_899, east = 0.001_806
    static let origin = RoadCoordinate(lat: 60.17, lon: 24.94)

    static func at(_ x: Double, _ y: Double) -> RoadCoordinate {
        RoadCoordinate(lat: origin.lat + y * north, lon: origin.lon + x * east)
    }

    /// West (0,0) — B (1,0) — east (2,0) — far east (3,0) along "Main" then "Other"; "Cross" from B north to a
    /// dead end (1,1) and south to (1,-1). Two-way, 10 s per 100 m.
    static func crossing() -> RoadRouter {
        var network = RoadNetwork()
        let nodes = [(0.0, 0.0), (1, 0), (2, 0), (3, 0), (1, 1), (1, -1)].enumerated().map { index, point in
            network.addNode(id: Int64(index), lat: at(point.0, point.1).lat, lon: at(point.0, point.1).lon)
        }
        network.road(nodes[0], nodes[1], seconds: 10, name: "Main")
        network.road(nodes[1], nodes[2], seconds: 10, name: "Main")
        network.road(nodes[2], nodes[3], seconds: 10, name: "Other")
        network.road(nodes[1], nodes[4], seconds: 10, name: "Cross")
        network.road(nodes[1], nodes[5], seconds: 10, name: "Cross")
        return RoadRouter(network: network)
    }

    static func summary(_ route: RoadRoute) -> [String] {
        route.steps.map { "\($0.type.rawValue) \($0.modifier?.rawValue ?? "-") \($0.name)" }
    }

    @Test func turningOffTheMainStreetIsATurnWithItsSide() throws {
        let router = Self.crossing()
        let left = try router.route(from: Self.at(0.5, 0.0001), to: Self.at(1.0001, 0.5))
        #expect(Self.summary(left) == ["depart - Main", "turn left Cross", "arrive - Cross"])
        let right = try router.route(from: Self.at(0.5, 0.0001), to: Self.at(1.0001, -0.5))
        #expect(Self.summary(right) == ["depart - Main", "turn right Cross", "arrive - Cross"])
        #expect(abs(right.distanceMeters - 100) < 1)
        #expect(right.steps[1].location == Self.at(1, 0))
        #expect(abs(right.steps[1].bearingBefore - 90) < 1 && abs(right.steps[1].bearingAfter - 180) < 1)
    }

    @Test func straightOnAlongOneStreetIsNoStepAndANewNameIsOne() throws {
        let router = Self.crossing()
        let along = try router.route(from: Self.at(0.5, 0), to: Self.at(1.5, 0))
        #expect(Self.summary(along) == ["depart - Main", "arrive - Main"])
        let renamed = try router.route(from: Self.at(0.5, 0), to: Self.at(2.5, 0))
        #expect(Self.summary(renamed) == ["depart - Main", "new name straight Other", "arrive - Other"])
        #expect(renamed.steps.map { Int($0.distanceMeters.rounded()) } == [150, 50, 0])
        #expect(abs(renamed.durationSeconds - 20) < 0.2)
        #expect(abs(renamed.steps[0].durationSeconds - 15) < 0.2 && abs(renamed.steps[1].durationSeconds - 5) < 0.2)
    }

    @Test func anUnnamedPieceStraightOnKeepsTheStreetWithoutASpuriousNewName() throws {
        var network = RoadNetwork()
        let nodes = (0..<4).map {
            network.addNode(id: Int64($0), lat: Self.at(Double($0), 0).lat, lon: Self.at(Double($0), 0).lon)
        }
        network.road(nodes[0], nodes[1], seconds: 10, name: "Main")
        network.road(nodes[1], nodes[2], seconds: 10)
        network.road(nodes[2], nodes[3], seconds: 10, name: "Main")
        network.road(
            nodes[1], network.addNode(id: 9, lat: Self.at(1, 1).lat, lon: Self.at(1, 1).lon), seconds: 10, name: "Cross"
        )
        let router = RoadRouter(network: network)
        #expect(
            Self.summary(try router.route(from: Self.at(0.5, 0), to: Self.at(2.5, 0))) == [
                "depart - Main", "arrive - Main",
            ])
        #expect(
            Self.summary(try router.route(from: Self.at(0.5, 0), to: Self.at(1.5, 0))) == [
                "depart - Main", "arrive - ",
            ])
    }

    @Test func headingIntoADeadEndToAPointBehindMakesAUTurn() throws {
        let router = Self.crossing()
        let route = try router.route(from: Self.at(1, 0.6), to: Self.at(1, 0.3), startHeading: 0)
        #expect(Self.summary(route) == ["depart - Cross", "continue uturn Cross", "arrive - Cross"])
        #expect(abs(route.distanceMeters - 110) < 1)  // 40 m up to the dead end, 70 m back
        // Without the heading the start may leave southwards: 30 m, no U-turn.
        let free = try router.route(from: Self.at(1, 0.6), to: Self.at(1, 0.3))
        #expect(Self.summary(free) == ["depart - Cross", "arrive - Cross"])
        #expect(abs(free.distanceMeters - 30) < 1)
    }

    @Test func modifiersFollowTheTurnAngle() {
        let cases: [(Double, RouteStep.Modifier)] = [
            (0, .straight), (-10, .straight), (30, .slightRight), (-45, .slightLeft),
            (90, .right), (-90, .left), (150, .sharpRight), (-160, .sharpLeft),
            (180, .uturn), (-175, .uturn),
        ]
        for (angle, modifier) in cases { #expect(RouteStep.Modifier(turnAngle: angle) == modifier) }
    }
}
