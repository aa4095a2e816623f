public import EnRouteModels

/// One event on `GET /v1/provider/events`.
public enum ProviderEvent: Sendable, Equatable {
    /// A time-limited offer of a trip.
    case offer(Offer)
    /// An offer expired or went to someone else.
    case offerWithdrawn(OfferWithdrawn)
    /// The provider's active trip changed on the server.
    case tripUpdated(TripSnapshot)
}

/// A provider event with the SSE id it came under (sent back as `Last-Event-ID` on reconnect).
public struct ProviderEventMessage: Sendable, Equatable {
    /// The event's id, if the server gave one.
    public let id: String?
    /// The event.
    public let event: ProviderEvent
    /// An event under `id`.
    public init(id: String?, event: ProviderEvent) { self.id = id; self.event = event }
}
