import Foundation
import Testing
import EnRouteModels
@testable import ProviderKit

/// An L-shaped route: 200 m north on Kaivokatu, a right turn, 200 m east on Mannerheimintie to the pickup.
enum LRoute {
    static let start = Coordinate(lat: 60.1700, lng: 24.9400)
    static let corner = Coordinate(lat: 60.1700 + 200 / 110_540, lng: 24.9400)
    static let end = Coordinate(lat: corner.lat, lng: 24.9400 + 200 / (111_320 * cos(60.1718 * .pi / 180)))
    static let t0 = Date(timeIntervalSince1970: 1_792_520_000)

    /// `metres` north of the start (negative: south); `east` metres east of it.
    static func point(north metres: Double, east: Double = 0) -> Coordinate {
        Coordinate(lat: start.lat + metres / 110_540, lng: start.lng + east / (111_320 * cos(start.lat * .pi / 180)))
    }

    /// `metres` east of the corner, `north` metres north of it.
    static func pastCorner(east metres: Double, north: Double = 0) -> Coordinate {
        Coordinate(
            lat: corner.lat + north / 110_540, lng: corner.lng + metres / (111_320 * cos(corner.lat * .pi / 180)))
    }

    static func route(
        trip: String = "T1", stop: RouteStop = .pickup, from: Coordinate = start, at time: Date = t0
    ) -> ProviderRoute {
        let steps = [
            RouteManeuver(
                type: "depart", modifier: nil, name: "Kaivokatu", distanceMeters: 200, durationSeconds: 30,
                location: start, bearingBefore: 0, bearingAfter: 0),
            RouteManeuver(
                type: "turn", modifier: "right", name: "Mannerheimintie", distanceMeters: 200, durationSeconds: 30,
                location: corner, bearingBefore: 0, bearingAfter: 90),
            RouteManeuver(
                type: "arrive", modifier: nil, name: "Mannerheimintie", distanceMeters: 0, durationSeconds: 0,
                location: end, bearingBefore: 90, bearingAfter: 0),
        ]
        return ProviderRoute(
            tripId: trip, stop: stop, from: from, to: end, distanceMeters: 400, durationSeconds: 60,
            polyline: Polyline.encode([from, corner, end], precision: 6), steps: steps, computedAt: time)
    }
}

@Suite struct GuidanceTests {
    func makeSUT(_ rules: Guidance.Rules = Guidance.Rules()) -> Guidance {
        Guidance(route: LRoute.route(), rules: rules)
    }

    @Test func theNextManeuverAndTheDistanceToItComeFromThePositionAlongTheRoute() {
        var sut = makeSUT()
        #expect(sut.update(position: LRoute.point(north: 80), heading: 0, accuracy: 5, at: LRoute.t0) == .none)
        let progress = sut.progress
        #expect(progress.nextManeuver?.type == "turn")
        #expect(progress.nextManeuver?.modifier == "right")
        #expect(progress.nextManeuver?.name == "Mannerheimintie")
        #expect(abs(progress.distanceToManeuver - 120) < 2)
        #expect(abs(progress.remainingMeters - 320) < 3)
        #expect(abs(progress.remainingSeconds - 48) < 1)
        #expect(progress.instruction == "In 120 m, turn right onto Mannerheimintie")
        #expect(!progress.arrived)
    }

    @Test func pastTheTurnTheNextManeuverIsTheArrival() {
        var sut = makeSUT()
        _ = sut.update(position: LRoute.pastCorner(east: 100, north: 4), heading: 90, accuracy: 5, at: LRoute.t0)
        #expect(sut.progress.nextManeuver?.type == "arrive")
        #expect(abs(sut.progress.distanceToManeuver - 100) < 2)
        #expect(sut.progress.instruction == "In 100 m, arrive at the pickup")
    }

    @Test func arrivalIsReportedOnceNearTheStop() {
        var sut = makeSUT()
        #expect(sut.update(position: LRoute.pastCorner(east: 180), heading: 90, accuracy: 5, at: LRoute.t0) == .arrived)
        #expect(sut.progress.arrived)
        #expect(sut.progress.instruction == "You have arrived at the pickup")
        #expect(sut.update(position: LRoute.pastCorner(east: 195), heading: 90, accuracy: 5, at: LRoute.t0) == .none)
        #expect(sut.progress.arrived)
    }

    /// The rule: more than 50 m off the line for 2 positions in a row asks for a new route from the latest.
    @Test func twoPositionsInARowMoreThan50MetresOffTheRouteAskForANewRoute() {
        var sut = makeSUT()
        let off1 = LRoute.point(north: 80, east: -60), off2 = LRoute.point(north: 90, east: -70)
        #expect(
            sut.update(position: off1, heading: 270, accuracy: 5, at: LRoute.t0) == .none,
            "one stray fix is not a deviation")
        #expect(sut.progress.offRouteMeters > 50)
        #expect(
            sut.update(position: off2, heading: 270, accuracy: 5, at: LRoute.t0.addingTimeInterval(1))
                == .reroute(from: off2, heading: 270))
        #expect(sut.isRerouting)
    }

    @Test func aPositionBackOnTheRouteResetsTheCount() {
        var sut = makeSUT()
        #expect(
            sut.update(position: LRoute.point(north: 80, east: -60), heading: nil, accuracy: 5, at: LRoute.t0) == .none)
        #expect(
            sut.update(position: LRoute.point(north: 90, east: 5), heading: nil, accuracy: 5, at: LRoute.t0) == .none)
        #expect(
            sut.update(position: LRoute.point(north: 100, east: -60), heading: nil, accuracy: 5, at: LRoute.t0) == .none
        )
    }

    @Test func fortyMetresOffTheRouteIsStillOnIt() {
        var sut = makeSUT()
        for second in 0..<5 {
            #expect(
                sut.update(
                    position: LRoute.point(north: 40 + Double(second) * 10, east: -40), heading: nil, accuracy: 5,
                    at: LRoute.t0.addingTimeInterval(Double(second))) == .none)
        }
    }

    /// A lost GPS keeps reporting far-off positions; route requests go out no faster than the throttle allows.
    @Test func reroutesAreThrottledAndBackOffAfterFailures() {
        var sut = makeSUT()
        let off = LRoute.point(north: 100, east: -300)
        func at(_ s: Double) -> Date { LRoute.t0.addingTimeInterval(s) }
        _ = sut.update(position: off, heading: nil, accuracy: 5, at: at(0))
        #expect(sut.update(position: off, heading: nil, accuracy: 5, at: at(1)) == .reroute(from: off, heading: nil))
        #expect(
            sut.update(position: off, heading: nil, accuracy: 5, at: at(2)) == .none, "one request in flight at a time")
        sut.rerouteFailed(at: at(3))
        #expect(
            sut.update(position: off, heading: nil, accuracy: 5, at: at(20)) == .none,
            "after a failure the pause is 30 s")
        #expect(sut.update(position: off, heading: nil, accuracy: 5, at: at(33)) == .reroute(from: off, heading: nil))
        sut.rerouteFailed(at: at(34))
        #expect(sut.update(position: off, heading: nil, accuracy: 5, at: at(90)) == .none, "after two, 60 s")
        #expect(sut.update(position: off, heading: nil, accuracy: 5, at: at(94)) == .reroute(from: off, heading: nil))
        for n in 0..<6 {
            sut.rerouteFailed(at: at(100 + Double(n)));
            _ = sut.update(position: off, heading: nil, accuracy: 5, at: at(100 + Double(n)))
        }
        #expect(
            sut.update(position: off, heading: nil, accuracy: 5, at: at(105 + 121))
                == .reroute(from: off, heading: nil), "capped at 120 s")
    }

    @Test func anInaccurateFixMovesNothing() {
        var sut = makeSUT()
        _ = sut.update(position: LRoute.point(north: 50), heading: nil, accuracy: 5, at: LRoute.t0)
        let before = sut.progress
        for _ in 0..<3 {
            #expect(
                sut.update(position: LRoute.point(north: 150, east: -400), heading: nil, accuracy: 80, at: LRoute.t0)
                    == .none)
        }
        #expect(sut.progress == before)
    }

    /// GPS jitter backwards does not make the distance left grow again.
    @Test func progressNeverMovesBackwardsAlongTheRoute() {
        var sut = makeSUT()
        _ = sut.update(position: LRoute.point(north: 150), heading: nil, accuracy: 5, at: LRoute.t0)
        let remaining = sut.progress.remainingMeters
        _ = sut.update(position: LRoute.point(north: 140), heading: nil, accuracy: 5, at: LRoute.t0)
        #expect(sut.progress.remainingMeters == remaining)
    }

    @Test func aNewRouteIsFollowedFromItsStart() {
        var sut = makeSUT()
        let off = LRoute.point(north: 100, east: -300)
        _ = sut.update(position: off, heading: nil, accuracy: 5, at: LRoute.t0)
        _ = sut.update(position: off, heading: nil, accuracy: 5, at: LRoute.t0)
        #expect(sut.isRerouting)
        sut.rerouted(LRoute.route(from: off))
        #expect(!sut.isRerouting)
        #expect(sut.route.from == off)
        #expect(sut.progress.remainingMeters > 400)
        #expect(sut.update(position: off, heading: nil, accuracy: 5, at: LRoute.t0.addingTimeInterval(2)) == .none)
    }

    @Test(
        arguments: [
            ("turn", "left", "Mannerheimintie", "turn left onto Mannerheimintie"),
            ("turn", "slight right", "", "turn slight right"),
            ("turn", "uturn", "Simonkatu", "make a U-turn onto Simonkatu"),
            ("new name", "straight", "Simonkatu", "continue onto Simonkatu"),
            ("continue", "straight", "Kaivokatu", "continue straight onto Kaivokatu"),
            ("continue", "left", "Kaivokatu", "keep left onto Kaivokatu"),
            ("roundabout", "right", "Ratapihantie", "enter the roundabout onto Ratapihantie"),
            ("exit roundabout", "straight", "Ratapihantie", "exit the roundabout onto Ratapihantie"),
            ("arrive", nil, "Annankatu", "arrive at the destination"),
        ] as [(String, String?, String, String)])
    func maneuversReadAsWords(_ type: String, _ modifier: String?, _ name: String, _ words: String) {
        let maneuver = RouteManeuver(
            type: type, modifier: modifier, name: name, distanceMeters: 0, durationSeconds: 0,
            location: LRoute.start, bearingBefore: 0, bearingAfter: 0)
        #expect(Guidance.action(maneuver, stop: .dropoff) == words)
    }

    @Test(arguments: [
        (1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"), (13, "13th"), (21, "21st"),
        (22, "22nd"),
    ])
    func aRoundaboutSaysWhichExitToTake(_ exit: Int, _ ordinal: String) {
        let maneuver = RouteManeuver(
            type: "roundabout", modifier: "left", name: "Hämeentie", distanceMeters: 0, durationSeconds: 0,
            location: LRoute.start, bearingBefore: 0, bearingAfter: 0, exit: exit)
        #expect(
            Guidance.action(maneuver, stop: .pickup)
                == "enter the roundabout and take the \(ordinal) exit onto Hämeentie")
    }

    @Test func distancesReadInMetresThenKilometres() {
        let turn = LRoute.route().steps[1]
        #expect(Guidance.instruction(turn, in: 7, stop: .pickup) == "Now, turn right onto Mannerheimintie")
        #expect(Guidance.instruction(turn, in: 124, stop: .pickup) == "In 120 m, turn right onto Mannerheimintie")
        #expect(Guidance.distanceText(1_240) == "1.2 km")
    }
}
