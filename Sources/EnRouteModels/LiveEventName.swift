/// The name of every event on the live streams: the SSE `event:` field, the WebSocket envelope's `type`.
public enum LiveEventName: String, Sendable, CaseIterable {
    /// A ride's new version (`Trip`, on `/v1/trips/{id}/events`) or a held trip's new version for its provider
    /// (`TripSnapshot`, on `/v1/provider/events`).
    case tripUpdated
    /// A ride's driver moved (`DriverLocation`, with the ETA the server computed for that fix).
    case driverMoved
    /// An order's tracking snapshot (the order tracker's JSON, on `/v1/orders/{id}/events`).
    case tracking
    /// A time-limited offer of a trip to the provider (`Offer`).
    case offer
    /// The offer expired or the trip went elsewhere (`OfferWithdrawn`).
    case offerWithdrawn
    /// The watcher stopped being a party to the trip (`AccessEnded`): the last event of a trip's or order's stream.
    case accessEnded
}
