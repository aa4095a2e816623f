public import HTTPTransport
public import EnRouteModels
import Foundation

/// The provider endpoints of the EnRoute API over an `HTTPClient`.
public struct RemoteProviderAPI: LocationUploading, StepSending, OfferResponding, ProviderSessionAPI, RouteFetching {
    private let client: any HTTPClient
    private let server: APIServer

    /// Accepting an offer waits at most this long: the offer is a race against its time limit.
    static let acceptTimeout: Duration = .seconds(5)

    /// Calls `server` through `client`.
    public init(client: any HTTPClient, server: APIServer) {
        self.client = client
        self.server = server
    }

    /// `POST /v1/provider/locations`.
    public func upload(_ batch: LocationBatch) async throws -> LocationBatchResult {
        let request = try await server.request("POST", APIPath.providerLocations, json: batch)
        return try await client.send(request).decode(LocationBatchResult.self)
    }

    /// `POST /v1/provider/trips/{id}/steps`; a 409 with the real trip is `.rejected`.
    public func send(_ change: StepChange) async throws -> StepOutcome {
        let request = try await server.request("POST", APIPath.providerTripSteps(change.tripId), json: change.request)
        let response = try await client.send(request)
        if response.status == 409,
            let conflict = try? WireCoding.decoder().decode(ConflictProblem<TripSnapshot>.self, from: response.body)
        {
            return .rejected(conflict.trip, reason: conflict.detail)
        }
        return .applied(try response.decode(TripSnapshot.self))
    }

    /// `POST /v1/provider/offers/{id}/accept`, once, with a short timeout; a 409 is `.gone`.
    public func accept(offerId: String) async throws -> OfferAnswer {
        let request = await server.request("POST", APIPath.providerOfferAccept(offerId), timeout: Self.acceptTimeout)
        let response = try await client.send(request)
        if response.status == 409 {
            let conflict = try? WireCoding.decoder().decode(ConflictProblem<TripSnapshot>.self, from: response.body)
            let problem = try? WireCoding.decoder().decode(Problem.self, from: response.body)
            return .gone(
                conflict?.trip, reason: conflict?.detail ?? problem?.detail ?? "The offer is no longer available.")
        }
        return .accepted(try response.decode(TripSnapshot.self))
    }

    /// `POST /v1/provider/offers/{id}/decline`.
    public func decline(offerId: String) async throws {
        let request = await server.request("POST", APIPath.providerOfferDecline(offerId), timeout: Self.acceptTimeout)
        try await client.send(request).requireSuccess()
    }

    /// `POST /v1/provider/availability`.
    public func setAvailability(online: Bool, position: Coordinate?) async throws -> AvailabilityState {
        let request = try await server.request(
            "POST", APIPath.providerAvailability, json: AvailabilityRequest(online: online, position: position))
        return try await client.send(request).decode(AvailabilityState.self)
    }

    /// `GET /v1/provider/events` as SSE; unknown event names are skipped.
    public func events(lastEventID: String?) -> AsyncThrowingStream<ProviderEventMessage, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ProviderEventMessage.self)
        let task = Task { [client, server] in
            do {
                var headers = ["Accept": "text/event-stream"]
                if let lastEventID { headers["Last-Event-ID"] = lastEventID }
                let request = await server.request("GET", APIPath.providerEvents, headers: headers)
                for try await message in client.events(request) {
                    if let event = try Self.decode(message) {
                        continuation.yield(ProviderEventMessage(id: message.id, event: event))
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// `GET /v1/provider/trips/active`.
    public func activeTrips() async throws -> [TripSnapshot] {
        let request = await server.request("GET", APIPath.providerActiveTrips)
        return try await client.send(request).decode(TripSnapshotList.self).trips
    }

    /// `GET /v1/provider/trips/{id}/route`, with `?from=lat,lng&heading=` when given.
    public func route(trip: String, from: Coordinate?, heading: Double?) async throws -> ProviderRoute {
        let request = await server.request("GET", APIPath.providerTripRoute(trip, from: from, heading: heading))
        return try await client.send(request).decode(ProviderRoute.self)
    }

    /// The provider event in one SSE message; nil for names this client does not know (keep-alives, newer events).
    static func decode(_ message: ServerSentEvent) throws -> ProviderEvent? {
        let decoder = WireCoding.decoder()
        let data = Data(message.data.utf8)
        do {
            switch LiveEventName(rawValue: message.event) {
            case .offer: return .offer(try decoder.decode(Offer.self, from: data))
            case .offerWithdrawn: return .offerWithdrawn(try decoder.decode(OfferWithdrawn.self, from: data))
            case .tripUpdated: return .tripUpdated(try decoder.decode(TripSnapshot.self, from: data))
            case .driverMoved, .tracking, .accessEnded, nil: return nil
            }
        } catch {
            throw APIError.undecodable("\(message.event) event \(message.id ?? "without id"): \(error)")
        }
    }
}
