import Foundation
import Routing
import TestSupport
import Testing

/// The map matcher on hand-built streets: one-ways honoured, breaks reported rather than bridged.
@Suite struct MapMatcherTests {
    static let origin = RoadCoordinate(lat: 60, lon: 25)

    /// A point `east` and `north` metres from the origin.
    static func point(east: Double, north: Double) -> RoadCoordinate {
        DrivenPath.destination(
            from: DrivenPath.destination(from: origin, bearing: 90, meters: east), bearing: 0, meters: north)
    }

    /// Two parallel streets 30 m apart, 600 m long, joined at both ends: "One-way" (eastbound only) on the south
    /// side and "Two-way" on the north side, each split into 100 m edges.
    static func parallelStreets() -> RoadNetwork {
        var network = RoadNetwork(turnCosts: .none)
        let south = (0...6).map {
            network.addNode(
                id: Int64($0), lat: point(east: Double($0) * 100, north: 0).lat,
                lon: point(east: Double($0) * 100, north: 0).lon)
        }
        let north = (0...6).map {
            network.addNode(
                id: Int64(10 + $0), lat: point(east: Double($0) * 100, north: 30).lat,
                lon: point(east: Double($0) * 100, north: 30).lon)
        }
        for index in 0..<6 {
            network.addEdge(from: south[index], to: south[index + 1], durationSeconds: 10, name: "One-way")
            network.addEdge(from: north[index], to: north[index + 1], durationSeconds: 10, name: "Two-way")
            network.addEdge(from: north[index + 1], to: north[index], durationSeconds: 10, name: "Two-way")
        }
        for end in [0, 6] {
            network.addEdge(from: south[end], to: north[end], durationSeconds: 3, name: "Link")
            network.addEdge(from: north[end], to: south[end], durationSeconds: 3, name: "Link")
        }
        return network
    }

    static let options = MapMatcher.Options(sigmaMeters: 10, betaMeters: 5)

    @Test func aDriveWestNearerTheEastboundOneWayIsMatchedToTheTwoWayStreet() {
        let network = Self.parallelStreets()
        // Driving west on the two-way street, every fix 17 m from it and 13 m from the one-way.
        let fixes = DrivenPath.fixes(
            along: [Self.point(east: 550, north: 13), Self.point(east: 50, north: 13)],
            spacing: 10, noise: 2, seed: 7)
        let match = MapMatcher(network: network, options: Self.options).match(fixes)
        #expect(!match.isBroken)
        #expect(match.segments.count == 1)
        #expect(Set(match.edges.map { network.name(ofEdge: $0) }) == ["Two-way"])
        #expect(abs(match.distanceMeters - 500) < 15)
        #expect(match.snapped.allSatisfy { $0.map { network.name(ofEdge: $0.edge) == "Two-way" } ?? false })
        // Every edge is 100 m in 10 s: the free-flow duration follows the distance.
        #expect(abs(match.durationSeconds - match.distanceMeters / 10) < 0.5)
    }

    @Test func theSameFixesDrivenEastMatchTheNearerOneWay() {
        let network = Self.parallelStreets()
        let fixes = DrivenPath.fixes(
            along: [Self.point(east: 50, north: 13), Self.point(east: 550, north: 13)],
            spacing: 10, noise: 2, seed: 7)
        let match = MapMatcher(network: network, options: Self.options).match(fixes)
        #expect(Set(match.edges.map { network.name(ofEdge: $0) }) == ["One-way"])
        #expect(abs(match.distanceMeters - 500) < 15)
    }

    @Test func fullyDrivenEdgesGetTimesInterpolatedFromTheFixes() throws {
        let network = Self.parallelStreets()
        // 5 m/s east along the one-way from 50 m to 550 m: 400 m of whole edges (100 to 500), 20 s each.
        let fixes = DrivenPath.fixes(
            along: [Self.point(east: 50, north: 0), Self.point(east: 550, north: 0)],
            spacing: 5, noise: 0, seed: 1)
        let match = MapMatcher(network: network, options: Self.options).match(fixes)
        let traversals = match.traversals
        #expect(traversals.count == 4)
        for traversal in traversals { #expect(abs(traversal.seconds - 20) < 0.5) }
        let first = try #require(traversals.first)
        #expect(abs(first.enteredAt - 10) < 0.5)
    }

    /// A straight two-way road 1 km east from the origin in 100 m edges.
    static func straightRoad(length: Int = 10) -> RoadNetwork {
        var network = RoadNetwork(turnCosts: .none)
        let nodes = (0...length).map {
            network.addNode(
                id: Int64($0), lat: point(east: Double($0) * 100, north: 0).lat,
                lon: point(east: Double($0) * 100, north: 0).lon)
        }
        for index in 0..<length {
            network.addEdge(from: nodes[index], to: nodes[index + 1], durationSeconds: 10, name: "Road")
            network.addEdge(from: nodes[index + 1], to: nodes[index], durationSeconds: 10, name: "Road")
        }
        return network
    }

    @Test func fixesFarFromAnyRoadBreakThePathAndAreNotMatched() throws {
        let network = Self.straightRoad()
        let before = DrivenPath.fixes(
            along: [Self.point(east: 0, north: 0), Self.point(east: 300, north: 0)], spacing: 10, noise: 0, seed: 1)
        let away = DrivenPath.fixes(
            along: [Self.point(east: 400, north: 300), Self.point(east: 600, north: 300)], spacing: 50, noise: 0,
            seed: 1, start: 31)
        let after = DrivenPath.fixes(
            along: [Self.point(east: 700, north: 0), Self.point(east: 1000, north: 0)], spacing: 10, noise: 0,
            seed: 1, start: 36)
        let fixes = before + away + after
        let match = MapMatcher(network: network, options: Self.options).match(fixes)
        #expect(match.isBroken)
        #expect(match.segments.count == 2)
        let gap = try #require(match.breaks.first)
        #expect(gap.reason == .noCandidates)
        #expect(gap.lastFixBefore == before.count - 1)
        #expect(gap.firstFixAfter == before.count + away.count)
        for index in before.count..<(before.count + away.count) { #expect(match.snapped[index] == nil) }
        // The 400 m between the segments is not invented.
        #expect(abs(match.distanceMeters - 600) < 5)
    }

    @Test func aLongSilenceBetweenFixesIsAGapNotARoute() throws {
        let network = Self.straightRoad()
        let before = DrivenPath.fixes(
            along: [Self.point(east: 0, north: 0), Self.point(east: 300, north: 0)], spacing: 10, noise: 0, seed: 1)
        let after = DrivenPath.fixes(
            along: [Self.point(east: 600, north: 0), Self.point(east: 1000, north: 0)], spacing: 10, noise: 0,
            seed: 1, start: 200)
        let match = MapMatcher(network: network, options: Self.options).match(before + after)
        #expect(
            match.breaks == [MatchBreak(lastFixBefore: before.count - 1, firstFixAfter: before.count, reason: .gap)])
        #expect(abs(match.distanceMeters - 700) < 5)
    }

    @Test func twoMinutesWaitingAtALightIsNotAGap() {
        let network = Self.straightRoad()
        let before = DrivenPath.fixes(
            along: [Self.point(east: 0, north: 0), Self.point(east: 300, north: 0)], spacing: 10, noise: 0, seed: 1)
        // A fix a second for two minutes, jittering a metre either way at the same spot.
        let waiting = (0..<120).map {
            MatchFix(coordinate: Self.point(east: 300 + Double($0 % 3 - 1), north: 1), time: 31 + Double($0))
        }
        let after = DrivenPath.fixes(
            along: [Self.point(east: 300, north: 0), Self.point(east: 1000, north: 0)], spacing: 10, noise: 0,
            seed: 1, start: 151)
        let match = MapMatcher(network: network, options: Self.options).match(before + waiting + after)
        #expect(match.breaks.isEmpty)
        #expect(abs(match.distanceMeters - 1000) < 5)
    }

    @Test func fixesOnTwoUnconnectedRoadsBreakWithNoRoute() throws {
        var network = RoadNetwork(turnCosts: .none)
        for (offset, start) in [0.0, 350].enumerated() {
            let a = network.addNode(
                id: Int64(offset * 2), lat: Self.point(east: start, north: 0).lat,
                lon: Self.point(east: start, north: 0).lon)
            let b = network.addNode(
                id: Int64(offset * 2 + 1), lat: Self.point(east: start + 300, north: 0).lat,
                lon: Self.point(east: start + 300, north: 0).lon)
            network.addEdge(from: a, to: b, durationSeconds: 30)
            network.addEdge(from: b, to: a, durationSeconds: 30)
        }
        let fixes = DrivenPath.fixes(
            along: [Self.point(east: 10, north: 0), Self.point(east: 640, north: 0)], spacing: 20, noise: 0, seed: 1)
        let match = MapMatcher(network: network, options: Self.options).match(fixes)
        #expect(match.breaks.map(\.reason) == [.noRoute])
        #expect(match.segments.count == 2)
        #expect(match.distanceMeters < 600)
    }

    @Test func aForbiddenTurnIsNotTakenEvenWhereTheFixesCutTheCorner() {
        // A junction J with roads west, north and east; west → north is forbidden, so a car from the west that ends
        // up north went east first and turned round (here: east to a loop back through a north-east diagonal).
        var network = RoadNetwork(turnCosts: .none)
        func node(_ id: Int64, _ east: Double, _ north: Double) -> Int32 {
            let p = Self.point(east: east, north: north)
            return network.addNode(id: id, lat: p.lat, lon: p.lon)
        }
        let west = node(0, -200, 0), junction = node(1, 0, 0), north = node(2, 0, 200), east = node(3, 100, 0)
        let westIn = network.addEdge(from: west, to: junction, durationSeconds: 20, name: "West")
        network.addEdge(from: junction, to: west, durationSeconds: 20, name: "West")
        let northOut = network.addEdge(from: junction, to: north, durationSeconds: 20, name: "North")
        network.addEdge(from: north, to: junction, durationSeconds: 20, name: "North")
        network.addEdge(from: junction, to: east, durationSeconds: 10, name: "East")
        network.addEdge(from: east, to: junction, durationSeconds: 10, name: "East")
        network.addEdge(from: east, to: north, durationSeconds: 20, name: "Diagonal")
        network.addRestriction(TurnRestriction(fromEdge: westIn, viaNode: junction, toEdge: northOut, kind: .no))
        let fixes = DrivenPath.fixes(
            along: [
                Self.point(east: -150, north: 0), Self.point(east: 0, north: 0),
                Self.point(east: 0, north: 150),
            ], spacing: 10, noise: 0, seed: 1)
        let match = MapMatcher(
            network: network, options: MapMatcher.Options(sigmaMeters: 10, betaMeters: 5, maxDetourMeters: 500)
        ).match(fixes)
        let edges = match.edges
        for (from, to) in zip(edges, edges.dropFirst()) { #expect(!(from == westIn && to == northOut)) }
        #expect(edges.contains { network.name(ofEdge: $0) == "East" })
    }
}
