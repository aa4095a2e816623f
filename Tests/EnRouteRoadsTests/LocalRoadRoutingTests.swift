import EnRouteDomain
import EnRouteModels
import EnRouteRoads
import Foundation
import Routing
import Testing
import TestSupport

/// A small town: a square block of two-way streets 0-1-2-3 (about 110 m a side) and a one-way spur 2 → 4.
private func town(blockSeconds: Double = 10) -> RoadNetwork {
    var network = RoadNetwork()
    let corners = [(60.1700, 24.9400), (60.1700, 24.9420), (60.1710, 24.9420), (60.1710, 24.9400), (60.1720, 24.9420)]
    for (index, corner) in corners.enumerated() {
        _ = network.addNode(id: Int64(index + 1), lat: corner.0, lon: corner.1)
    }
    for (a, b, name) in [(0, 1, "Etelä"), (1, 2, "Itä"), (2, 3, "Pohjoinen"), (3, 0, "Länsi")]
        as [(Int32, Int32, String)]
    {
        network.addEdge(from: a, to: b, durationSeconds: blockSeconds, name: name)
        network.addEdge(from: b, to: a, durationSeconds: blockSeconds, name: name)
    }
    network.addEdge(from: 2, to: 4, durationSeconds: blockSeconds, name: "Yksisuuntainen")
    return network
}

private let now = Date(timeIntervalSince1970: 1_800_000_000)

@Suite struct LocalRoadRoutingTests {
    let roads = LocalRoadRouting(graph: .init(network: town()))

    @Test func routesAlongTheRoadsWithStepsFromDepartToArrive() async throws {
        let leg = try await roads.route(
            from: Coordinate(lat: 60.1700, lng: 24.9405), to: Coordinate(lat: 60.1715, lng: 24.9420),
            heading: nil, departure: now)
        #expect(leg.distanceMeters > 150 && leg.distanceMeters < 250)
        #expect(leg.durationSeconds > 0)
        #expect(leg.steps.first?.type == "depart")
        #expect(leg.steps.last?.type == "arrive")
        #expect(leg.steps.contains { $0.name == "Itä" })
        #expect(leg.geometry.count >= 3)
    }

    @Test func aOneWayStreetIsNotDrivenAgainstItsDirection() async throws {
        // From near the dead end of the one-way spur, which leads nowhere: the route starts on the block's
        // nearest road (as OSRM's big-component snap does), never back down the spur.
        let leg = try await roads.route(
            from: Coordinate(lat: 60.1719, lng: 24.9420), to: Coordinate(lat: 60.1700, lng: 24.9405),
            heading: 0, departure: now)
        #expect(!leg.steps.contains { $0.name == "Yksisuuntainen" })
        let first = try #require(leg.geometry.first)
        #expect(abs(first.lat - 60.1710) < 0.00005 && abs(first.lng - 24.9420) < 0.0001)
    }

    @Test func aCoordinateFarFromAnyRoadIsNoSegmentWithItsIndex() async throws {
        await #expect(throws: RoadRoutingError.noSegment(index: 1)) {
            _ = try await roads.table(
                sources: [Coordinate(lat: 60.1700, lng: 24.9405)], destinations: [Coordinate(lat: 60.20, lng: 24.90)],
                departure: now)
        }
    }

    @Test func tableCellsMatchSingleRoutes() async throws {
        let points = [
            Coordinate(lat: 60.1700, lng: 24.9405), Coordinate(lat: 60.1705, lng: 24.9420),
            Coordinate(lat: 60.1710, lng: 24.9410),
        ]
        let table = try await roads.table(sources: points, destinations: points, departure: now)
        for (i, a) in points.enumerated() {
            for (j, b) in points.enumerated() where i != j {
                let leg = try await roads.route(from: a, to: b, heading: nil, departure: now)
                let cell = try #require(table[i][j])
                #expect(abs(cell.durationSeconds - leg.durationSeconds) < 0.11)
                #expect(abs(cell.distanceMeters - leg.distanceMeters) < 1)
            }
        }
    }

    @Test func nearestSnapsOntoTheStreetWithItsName() async throws {
        let waypoint = try await roads.nearest(Coordinate(lat: 60.17003, lng: 24.9410), heading: nil)
        #expect(waypoint.name == "Etelä")
        #expect(abs(waypoint.location.lat - 60.1700) < 0.00002)
        #expect(waypoint.distanceMeters > 2 && waypoint.distanceMeters < 5)
    }

    @Test func aReplacedGraphAnswersTheNextQuery() async throws {
        let from = Coordinate(lat: 60.1700, lng: 24.9405), to = Coordinate(lat: 60.1705, lng: 24.9420)
        let before = try await roads.route(from: from, to: to, heading: nil, departure: now)
        roads.replace(.init(network: town(blockSeconds: 40)))
        let after = try await roads.route(from: from, to: to, heading: nil, departure: now)
        #expect(
            after.durationSeconds > before.durationSeconds * 2, "four times slower streets must show in the next route")
    }
}

@Suite struct LocalRoadRoutingOnHelsinkiTests {
    @Test func routesAcrossCentralHelsinkiOnNamedStreets() async throws {
        let roads = try await TestRoads.helsinki()
        // Kamppi (Fredrikinkatu) to Kluuvi (Aleksanterinkatu): about 1 km as the crow flies.
        let leg = try await roads.route(
            from: Coordinate(lat: 60.1670, lng: 24.9365), to: Coordinate(lat: 60.1690, lng: 24.9490),
            heading: nil, departure: now)
        #expect(leg.distanceMeters > 700 && leg.distanceMeters < 2500)
        #expect(leg.durationSeconds > 60 && leg.durationSeconds < 900)
        #expect(leg.steps.count >= 3)
        #expect(
            leg.steps.dropFirst().dropLast().allSatisfy {
                !$0.name.isEmpty || $0.type == "continue" || $0.type == "turn" || $0.type == "new name"
            })
    }
}
