import Foundation
import Testing
import EnRouteModels
@testable import EnRouteDomain
@testable import EnRouteAPI

/// Every move from every state by every party, for both machines: allowed exactly when the table says so.
@Suite struct TripRulesTests {
    static let at = Date(timeIntervalSince1970: 1_792_520_000)

    // The expected tables, written out independently of the implementation.
    // Ride: (from, move, party) → to. The assigned provider is "p1".
    static let rideAllowed: [String: TripState] = [
        "searching|assign|provider": .driverAssigned,
        "searching|assign|backend": .driverAssigned,
        "searching|assign|ops": .driverAssigned,
        "searching|noProvider|backend": .noDriversFound,
        "searching|noProvider|ops": .noDriversFound,
        "searching|cancel|customer": .cancelled,
        "searching|cancel|backend": .cancelled,
        "searching|cancel|ops": .cancelled,
        "driverAssigned|driverArrived|provider": .driverArrived,
        "driverAssigned|cancel|customer": .cancelled,
        "driverAssigned|cancel|provider": .searching,  // the driver gives up: search again
        "driverAssigned|cancel|backend": .cancelled,
        "driverAssigned|cancel|ops": .cancelled,
        "driverArrived|onTrip|provider": .onTrip,
        "driverArrived|cancel|customer": .cancelled,
        "driverArrived|cancel|provider": .cancelled,
        "driverArrived|cancel|backend": .cancelled,
        "driverArrived|cancel|ops": .cancelled,
        "onTrip|completed|provider": .completed,
    ]

    static let rideMoves: [(String, TripMove)] = [
        ("assign", .assignProvider("p1")), ("noProvider", .noProviderFound), ("cancel", .cancel(reason: "r")),
        ("driverArrived", .ride(.driverArrived)), ("onTrip", .ride(.onTrip)), ("completed", .ride(.completed)),
        ("searching", .ride(.searching)), ("merchantAccept", .merchantAccept(preparationMinutes: 5)),
        ("problem", .reportProblem("x")),
    ]

    static func ride(_ state: TripState) -> TripRecord {
        var trip = TripRecord(
            id: "R1", kind: .ride, status: .ride(state), customerId: "c1",
            pickup: .init(lat: 60.17, lng: 24.94), dropoff: .init(lat: 60.19, lng: 24.96), createdAt: at)
        if state != .searching && state != .noDriversFound { trip.providerId = "p1" }
        return trip
    }

    static func actor(_ party: Party) -> String {
        switch party {
        case .customer: "c1"
        case .provider: "p1"
        case .merchant: "m1"
        case .backend, .ops: "staff"
        }
    }

    @Test(arguments: TripState.allCases)
    func rideMovesFollowTheTableForEveryParty(from state: TripState) {
        for (moveName, move) in Self.rideMoves {
            for party in Party.allCases {
                let key = "\(state.rawValue)|\(moveName)|\(party.rawValue)"
                let result = TripRules.apply(
                    move, to: Self.ride(state), by: party, actorId: Self.actor(party), at: Self.at)
                switch (result, Self.rideAllowed[key]) {
                case (.success(let next), let expected?):
                    #expect(next.status == .ride(expected), "\(key)")
                    #expect(next.version == 2, "\(key) bumps the version")
                case (.failure, nil):
                    break
                case (.success(let next), nil):
                    Issue.record("\(key) should be refused, went to \(next.status.name)")
                case (.failure(let refusal), let expected?):
                    Issue.record("\(key) should reach \(expected), refused: \(refusal.reason)")
                }
            }
        }
    }

    @Test func onlyTheAssignedProviderMovesARide() {
        let trip = Self.ride(.driverAssigned)
        guard
            case .failure = TripRules.apply(.ride(.driverArrived), to: trip, by: .provider, actorId: "p2", at: Self.at)
        else {
            Issue.record("another provider moved the ride"); return
        }
        guard case .failure = TripRules.apply(.cancel(reason: "x"), to: trip, by: .customer, actorId: "c2", at: Self.at)
        else {
            Issue.record("another customer cancelled the ride"); return
        }
    }

    @Test func aProviderGivingUpBeforePickupReturnsTheRideToSearchingWithoutThem() throws {
        var trip = Self.ride(.driverAssigned)
        trip.providerFix = ProviderFix(
            coordinate: .init(lat: 1, lng: 1), heading: 0, speed: 0, recordedAt: Self.at, seq: 3)
        let next = try TripRules.apply(
            .cancel(reason: "flat tyre"), to: trip, by: .provider, actorId: "p1", at: Self.at
        ).get()
        #expect(next.status == .ride(.searching))
        #expect(next.providerId == nil)
        #expect(next.providerFix == nil)
        #expect(next.cancellation == nil)
    }

    // Deliveries: (status+merchantStep+courier, move, party) → outcome.
    struct DeliveryCase: CustomTestStringConvertible, Sendable {
        let status: DeliveryStatus
        let step: MerchantStep
        let courier: Bool
        let problem: Bool
        var testDescription: String {
            "\(status.rawValue)/\(step.rawValue)/\(courier ? "courier" : "none")\(problem ? "/problem" : "")"
        }
    }

    static let deliveryCases: [DeliveryCase] = DeliveryStatus.allCases.flatMap { status in
        MerchantStep.allCases.flatMap { step in
            [false, true].flatMap { courier in
                [false, true].map { problem in
                    DeliveryCase(status: status, step: step, courier: courier, problem: problem)
                }
            }
        }
    }

    static let deliveryMoves: [(String, TripMove)] = [
        ("merchantAccept", .merchantAccept(preparationMinutes: 10)), ("merchantReady", .merchantReady),
        ("assign", .assignProvider("p1")), ("onTheWay", .delivery(.onTheWay)), ("arriving", .delivery(.arriving)),
        ("delivered", .delivery(.delivered)), ("cancel", .cancel(reason: "r")),
        ("problem", .reportProblem("Rider delayed")),
        ("clearProblem", .clearProblem), ("driverArrived", .ride(.driverArrived)), ("noProvider", .noProviderFound),
    ]

    /// The delivery table as the spec states it, written as a predicate over the case.
    static func expectedDelivery(_ c: DeliveryCase, _ move: String, _ party: Party) -> (DeliveryStatus, courier: Bool)?
    {
        let backend = party == .backend || party == .ops
        let terminal = c.status == .delivered || c.status == .cancelled
        switch move {
        case "merchantAccept" where c.status == .placed && party == .merchant: return (.picking, c.courier)
        case "merchantReady" where c.status == .picking && c.step == .preparing && party == .merchant:
            return (.picking, c.courier)
        case "assign"
        where (c.status == .placed || c.status == .picking) && !c.courier && (party == .provider || backend):
            return (c.status, true)
        case "onTheWay" where c.status == .picking && c.step == .ready && c.courier && party == .provider:
            return (.onTheWay, true)
        case "arriving" where c.status == .onTheWay && c.courier && party == .provider: return (.arriving, true)
        case "delivered" where (c.status == .onTheWay || c.status == .arriving) && c.courier && party == .provider:
            return (.delivered, true)
        case "cancel" where !terminal && c.courier && party == .provider:
            return (c.status == .placed ? .placed : .picking, false)  // the courier gives up: reassignment
        case "cancel"
        where (c.status == .placed || c.status == .picking) && (party == .customer || party == .merchant || backend):
            return (.cancelled, c.courier)
        case "cancel" where (c.status == .onTheWay || c.status == .arriving) && backend: return (.cancelled, c.courier)
        case "problem" where !terminal && (backend || party == .merchant || (party == .provider && c.courier)):
            return (c.status, c.courier)
        case "clearProblem" where !terminal && c.problem && backend: return (c.status, c.courier)
        default: return nil
        }
    }

    @Test(arguments: deliveryCases)
    func deliveryMovesFollowTheTableForEveryParty(_ c: DeliveryCase) {
        var trip = TripRecord(
            id: "D1", kind: .delivery, status: .delivery(c.status), customerId: "c1",
            pickup: .init(lat: 60.17, lng: 24.93), dropoff: .init(lat: 60.18, lng: 24.95), createdAt: Self.at)
        trip.merchantId = "m1"
        trip.merchantStep = c.step
        trip.providerId = c.courier ? "p1" : nil
        trip.problem = c.problem ? "Rider delayed" : nil
        for (moveName, move) in Self.deliveryMoves {
            for party in Party.allCases {
                let key = "\(c.testDescription)|\(moveName)|\(party.rawValue)"
                let result = TripRules.apply(move, to: trip, by: party, actorId: Self.actor(party), at: Self.at)
                switch (result, Self.expectedDelivery(c, moveName, party)) {
                case (.success(let next), let expected?):
                    #expect(next.status == .delivery(expected.0), "\(key)")
                    #expect((next.providerId != nil) == expected.courier, "\(key) courier")
                    #expect(next.version == trip.version + 1, "\(key) bumps the version")
                case (.failure, nil):
                    break
                case (.success(let next), nil):
                    Issue.record("\(key) should be refused, went to \(next.status.name)")
                case (.failure(let refusal), let expected?):
                    Issue.record("\(key) should reach \(expected.0), refused: \(refusal.reason)")
                }
            }
        }
    }

    @Test func merchantAcceptStatesAPreparationTimeAndReadyMarksIt() throws {
        var trip = TripRecord(
            id: "D1", kind: .delivery, status: .delivery(.placed), customerId: "c1",
            pickup: .init(lat: 60.17, lng: 24.93), dropoff: .init(lat: 60.18, lng: 24.95), createdAt: Self.at)
        trip.merchantId = "m1"
        trip.merchantStep = .pending
        let accepted = try TripRules.apply(
            .merchantAccept(preparationMinutes: 12), to: trip, by: .merchant, actorId: "m1", at: Self.at
        ).get()
        #expect(accepted.merchantStep == .preparing)
        #expect(accepted.readyAt == Self.at.addingTimeInterval(720))
        let ready = try TripRules.apply(
            .merchantReady, to: accepted, by: .merchant, actorId: "m1", at: Self.at.addingTimeInterval(600)
        ).get()
        #expect(ready.merchantStep == .ready)
        #expect(ready.version == 3)
        guard
            case .failure = TripRules.apply(
                .merchantAccept(preparationMinutes: 1), to: trip, by: .merchant, actorId: "m2", at: Self.at)
        else {
            Issue.record("another merchant accepted the order"); return
        }
    }

    @Test func aStatusMoveClearsTheProblemAndTerminalOrdersNeverReopen() throws {
        var trip = TripRecord(
            id: "D1", kind: .delivery, status: .delivery(.onTheWay), customerId: "c1",
            pickup: .init(lat: 60.17, lng: 24.93), dropoff: .init(lat: 60.18, lng: 24.95), createdAt: Self.at)
        trip.providerId = "p1"
        trip.problem = "Rider delayed"
        let arriving = try TripRules.apply(.delivery(.arriving), to: trip, by: .provider, actorId: "p1", at: Self.at)
            .get()
        #expect(arriving.problem == nil)
        let delivered = try TripRules.apply(
            .delivery(.delivered), to: arriving, by: .provider, actorId: "p1", at: Self.at
        ).get()
        for (_, move) in Self.deliveryMoves {
            for party in Party.allCases {
                guard
                    case .failure = TripRules.apply(
                        move, to: delivered, by: party, actorId: Self.actor(party), at: Self.at)
                else {
                    Issue.record("delivered reopened by \(party) \(move)"); return
                }
            }
        }
    }
}
