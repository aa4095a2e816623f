public import Foundation
public import EnRouteModels

/// The trip state machines: which party may make which move from which state.
///
/// Pure: no clock, no storage. `apply` returns the changed record with its version bumped, or a refusal.
public enum TripRules {
    /// Applies `move` made by `party` (account `actorId`) at `now`.
    public static func apply(
        _ move: TripMove, to trip: TripRecord, by party: Party, actorId: String, at now: Date
    ) -> Result<TripRecord, MoveRefusal> {
        var next = trip
        let outcome: MoveRefusal?
        switch trip.status {
        case .ride(let state): outcome = applyRide(move, state, &next, party, actorId)
        case .delivery(let status): outcome = applyDelivery(move, status, &next, party, actorId, now)
        }
        if let outcome { return .failure(outcome) }
        next.version = trip.version + 1
        next.updatedAt = now
        return .success(next)
    }

    private static func isBackend(_ party: Party) -> Bool { party == .backend || party == .ops }

    private static func refuse(_ move: TripMove, _ state: String, _ party: Party) -> MoveRefusal {
        let who = party == .ops ? "Ops" : "The \(party.rawValue)"
        return MoveRefusal("\(who) cannot \(describe(move)) while the trip is \(state).")
    }

    static func describe(_ move: TripMove) -> String {
        switch move {
        case .assignProvider: "take the trip"
        case .ride(let s): "move it to \(s.rawValue)"
        case .delivery(let s): "move it to \(s.rawValue)"
        case .cancel: "cancel it"
        case .noProviderFound: "end the search"
        case .merchantAccept: "accept the order"
        case .merchantReady: "mark it ready"
        case .reportProblem: "report a problem"
        case .clearProblem: "clear the problem"
        }
    }

    // MARK: Rides (the rider app's diagram)

    private static func applyRide(
        _ move: TripMove, _ state: TripState, _ trip: inout TripRecord, _ party: Party, _ actor: String
    ) -> MoveRefusal? {
        let isAssigned = party == .provider && trip.providerId == actor
        let isCustomer = party == .customer && trip.customerId == actor
        switch (state, move) {
        case (.searching, .assignProvider(let provider))
        where party == .provider && provider == actor || isBackend(party):
            trip.providerId = provider
            trip.status = .ride(.driverAssigned)
        case (.searching, .noProviderFound) where isBackend(party):
            trip.status = .ride(.noDriversFound)
        case (.driverAssigned, .ride(.driverArrived)) where isAssigned:
            trip.status = .ride(.driverArrived)
        case (.driverArrived, .ride(.onTrip)) where isAssigned:
            trip.status = .ride(.onTrip)
        case (.onTrip, .ride(.completed)) where isAssigned:
            trip.status = .ride(.completed)
        case (.driverAssigned, .cancel) where isAssigned:
            // The driver gives up before pickup: search again.
            trip.providerId = nil
            trip.providerFix = nil
            trip.status = .ride(.searching)
        case (.searching, .cancel(let reason)) where isCustomer || isBackend(party),
            (.driverAssigned, .cancel(let reason)) where isCustomer || isBackend(party),
            (.driverArrived, .cancel(let reason)) where isCustomer || isAssigned || isBackend(party):
            trip.status = .ride(.cancelled)
            trip.cancellation = Cancellation(by: party, reason: reason)
        default:
            return refuse(move, state.rawValue, party)
        }
        return nil
    }

    // MARK: Deliveries (the order tracker's statuses, the platform's merchant steps)

    private static func applyDelivery(
        _ move: TripMove, _ status: DeliveryStatus, _ trip: inout TripRecord, _ party: Party,
        _ actor: String, _ now: Date
    ) -> MoveRefusal? {
        let isCourier = party == .provider && trip.providerId == actor
        let isMerchant = party == .merchant && trip.merchantId == actor
        let isCustomer = party == .customer && trip.customerId == actor
        let label = trip.problem == nil ? status.rawValue : "\(status.rawValue) with a problem"
        switch (status, move) {
        case (.placed, .merchantAccept(let minutes)) where isMerchant:
            trip.status = .delivery(.picking)
            trip.merchantStep = .preparing
            trip.readyAt = now.addingTimeInterval(Double(minutes) * 60)
        case (.picking, .merchantReady) where isMerchant && trip.merchantStep == .preparing:
            trip.merchantStep = .ready
            trip.readyAt = now
        case (.placed, .assignProvider(let courier))
        where trip.providerId == nil && (party == .provider && courier == actor || isBackend(party)),
            (.picking, .assignProvider(let courier))
        where trip.providerId == nil && (party == .provider && courier == actor || isBackend(party)):
            trip.providerId = courier
        case (.picking, .delivery(.onTheWay)) where isCourier && trip.merchantStep == .ready:
            trip.status = .delivery(.onTheWay)
            trip.problem = nil
        case (.onTheWay, .delivery(.arriving)) where isCourier:
            trip.status = .delivery(.arriving)
            trip.problem = nil
        case (.onTheWay, .delivery(.delivered)) where isCourier,
            (.arriving, .delivery(.delivered)) where isCourier:
            trip.status = .delivery(.delivered)
            trip.problem = nil
        case (.placed, .cancel) where isCourier,
            (.picking, .cancel) where isCourier,
            (.onTheWay, .cancel) where isCourier,
            (.arriving, .cancel) where isCourier:
            // The courier gives up: a real move back to picking while another is found.
            trip.providerId = nil
            trip.providerFix = nil
            if status != .placed { trip.status = .delivery(.picking) }
        case (.placed, .cancel(let reason)) where isCustomer || isMerchant || isBackend(party),
            (.picking, .cancel(let reason)) where isCustomer || isMerchant || isBackend(party),
            (.onTheWay, .cancel(let reason)) where isBackend(party),
            (.arriving, .cancel(let reason)) where isBackend(party):
            trip.status = .delivery(.cancelled)
            trip.cancellation = Cancellation(by: party, reason: reason)
            trip.problem = nil
        case (_, .reportProblem(let message)) where !status.isTerminal && (isBackend(party) || isMerchant || isCourier):
            trip.problem = message
        case (_, .clearProblem) where !status.isTerminal && trip.problem != nil && isBackend(party):
            trip.problem = nil
        default:
            return refuse(move, label, party)
        }
        return nil
    }
}
