public import EnRouteModels

/// A ride's live feed: trip updates and driver positions.
public protocol LiveTripChannel: Sendable {
    /// Events for one trip; ends when the server closes the feed, throws when the connection breaks.
    /// Stopping the iteration closes the connection.
    func events(tripID: String) -> AsyncThrowingStream<TripEvent, any Error>
}
