/// The last event of a trip's live stream whose watcher is no longer one of its parties (a provider who gave the trip
/// up, say): nothing of the trip follows it, and a new request for the trip answers 404.
public struct AccessEnded: Codable, Sendable, Equatable {
    public let tripId: String
    /// Why, in words a person can read.
    public let reason: String

    public init(tripId: String, reason: String) { self.tripId = tripId; self.reason = reason }
}
