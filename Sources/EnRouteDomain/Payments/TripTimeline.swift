public import Foundation
public import EnRouteModels

/// What happened on a trip, read from its change log: when each step was applied.
public struct TripTimeline: Sendable, Equatable {
    public var requestedAt: Date
    public var assignedAt: Date?
    public var arrivedAt: Date?
    public var startedAt: Date?
    public var endedAt: Date?

    /// The timeline of `trip` from its change log (`changes`, oldest first).
    public init(trip: TripRecord, changes: [ChangeLogEntry]) {
        requestedAt = trip.createdAt
        for change in changes {
            switch change.status {
            case TripState.driverAssigned.rawValue where assignedAt == nil: assignedAt = change.serverTime
            case TripState.driverArrived.rawValue: arrivedAt = change.serverTime
            case TripState.onTrip.rawValue, DeliveryStatus.onTheWay.rawValue:
                if startedAt == nil { startedAt = change.serverTime }
            case TripState.completed.rawValue, TripState.cancelled.rawValue, TripState.noDriversFound.rawValue,
                DeliveryStatus.delivered.rawValue:
                // The first entry in a final state is the end; later ones (tips, ratings, payments) keep that status.
                if endedAt == nil { endedAt = change.serverTime }
            default: break
            }
            // A courier takes a delivery without a status of its own: the first step a provider made.
            if trip.kind == .delivery, assignedAt == nil, change.actorRole == .provider {
                assignedAt = change.serverTime
            }
        }
    }
}

/// A trip's measured distance and time, or why there is none.
public enum TripMeasured: Sendable, Equatable {
    case value(distanceMeters: Double, durationSeconds: Double)
    /// Still being made (the path is being matched onto the roads): try again shortly.
    case pending
    /// Too few fixes to measure: the quote's route stands in.
    case none
}

/// How the final price is measured, given by the composition root (roads, the stored path).
public protocol TripMeasurement: Sendable {
    /// The distance and time driven on the trip: the map-matched path when there are roads, the stored path otherwise.
    /// `final` is the settlement's last try: a measurement still being made is not waited for any longer.
    func measured(_ trip: TripRecord, final: Bool) async -> TripMeasured
    /// Whether the provider was on the way to the pickup after `assignedAt` (for the cancellation fee).
    func providerProgressed(_ trip: TripRecord, since assignedAt: Date) async -> Bool
}
