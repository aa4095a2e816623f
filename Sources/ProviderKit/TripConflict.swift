public import EnRouteModels

/// A 409 answer that carries the real trip: the move was refused because the trip is not where the client thought.
public struct TripConflict: Error, Sendable, Equatable {
    /// The trip as it really is.
    public let trip: TripSnapshot
    /// The server's reason.
    public let reason: String
    /// A conflict over `trip`.
    public init(trip: TripSnapshot, reason: String) { self.trip = trip; self.reason = reason }
}
