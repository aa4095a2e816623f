public import EnRouteModels

/// What the location uploader needs: `POST /v1/provider/locations`.
public protocol LocationUploading: Sendable {
    /// Sends one batch; a batch id already applied is acknowledged, not applied again.
    func upload(_ batch: LocationBatch) async throws -> LocationBatchResult
}

/// What the step sync engine needs: `POST /v1/provider/trips/{id}/steps`.
public protocol StepSending: Sendable {
    /// Sends one change; throws for anything that is neither applied nor a 409 refusal.
    func send(_ change: StepChange) async throws -> StepOutcome
}

/// What the offer card needs: accept or decline, now or never.
public protocol OfferResponding: Sendable {
    /// Accepts the offer; a transport error means the network is not there now.
    func accept(offerId: String) async throws -> OfferAnswer
    /// Declines the offer.
    func decline(offerId: String) async throws
}

/// What the provider session needs: availability, the event feed and the active trips.
public protocol ProviderSessionAPI: Sendable {
    /// Goes online (with where the provider is) or offline.
    func setAvailability(online: Bool, position: Coordinate?) async throws -> AvailabilityState
    /// The provider's event feed, resuming after `lastEventID` when given.
    func events(lastEventID: String?) -> AsyncThrowingStream<ProviderEventMessage, any Error>
    /// The provider's unfinished trips.
    func activeTrips() async throws -> [TripSnapshot]
}

/// What guidance needs: `GET /v1/provider/trips/{id}/route`.
public protocol RouteFetching: Sendable {
    /// The route from `from` (heading `heading`), or from the provider's latest uploaded fix when nil, to the trip's
    /// next stop. Throws `APIError` with status 503 when the server has no road network.
    func route(trip: String, from: Coordinate?, heading: Double?) async throws -> ProviderRoute
}

extension RouteFetching {
    /// The route from the provider's latest uploaded fix to the trip's next stop.
    public func route(trip: String) async throws -> ProviderRoute {
        try await route(trip: trip, from: nil, heading: nil)
    }
}
