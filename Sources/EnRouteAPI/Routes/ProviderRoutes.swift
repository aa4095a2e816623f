import HTTPEngine
import EnRouteDomain
import EnRouteModels

extension EnRouteAPI {
    /// The provider's routes: availability, offers, steps, active trips, location batches and the provider's live
    /// stream.
    func addProviderRoutes(_ r: inout Router) {
        addOfferRoutes(&r)
        addProviderTripRoutes(&r)
    }

    /// Availability, the provider's live stream, and offers: accepted (by trip or by offer) or declined.
    private func addOfferRoutes(_ r: inout Router) {
        r.post(
            APIPath.Template.providerTripAccept,
            limited(.steps) { req in
                let account = try auth.account(for: req, roles: [.provider])
                let id = try req.parameter("id")
                switch providers.dispatcher.tripAccept(id, by: account.id) {
                case .offer(let offerId):
                    return try await acceptOffer(offerId, account)
                case .notOffered:
                    // A retried accept of a trip this provider already holds answers as the first did.
                    if let held = try map({ try service.cached(id) }), held.providerId == account.id,
                        held.status.isActive
                    {
                        return try .json(wire.courierSnapshot(held))
                    }
                    // Never offered to this provider (or the offer is over): the trip is not theirs to see.
                    throw HTTPError.notFound("No offer of this trip is open for you.")
                }
            })
        r.post(
            APIPath.Template.providerAvailability,
            limited(.steps) { req in
                let account = try auth.account(for: req, roles: [.provider])
                let body = try req.decode(AvailabilityRequest.self)
                if let position = body.position { try map { try TripService.validate(position, "/position") } }
                return try .json(await providers.setAvailability(body, provider: account.id))
            })
        r.get(APIPath.Template.providerEvents) { req in
            let account = try auth.account(for: req, roles: [.provider])
            return providerStream(req, provider: account.id)
        }
        r.post(
            APIPath.Template.providerOfferAccept,
            limited(.steps) { req in
                let account = try auth.account(for: req, roles: [.provider])
                return try await acceptOffer(try req.parameter("offerId"), account)
            })
        r.post(
            APIPath.Template.providerOfferDecline,
            limited(.steps) { req in
                let account = try auth.account(for: req, roles: [.provider])
                let offerId = try req.parameter("offerId")
                do { try await providers.dispatcher.decline(offerId: offerId, by: account.id) } catch is OfferNotFound {
                    throw HTTPError.notFound("No such offer.")
                }
                return .empty(204)
            })
    }

    /// The provider's steps, active trips and location batches.
    private func addProviderTripRoutes(_ r: inout Router) {
        r.post(
            APIPath.Template.providerTripSteps,
            limited(.steps) { req in
                let account = try auth.account(for: req, roles: [.provider])
                let id = try req.parameter("id")
                let body = try req.decode(StepRequest.self)
                guard !body.changeId.isEmpty, body.changeId.count <= 128 else {
                    throw HTTPError.invalid("/changeId", "must be 1 to 128 characters")
                }
                if let position = body.position { try map { try TripService.validate(position, "/position") } }
                let current = try map { try service.trip(id, for: account) }
                let move = try Self.providerStep(body.step, kind: current.kind)
                try await checkProof(body.proofId, move: move, trip: current, by: account)
                let trip = try await mapAsync {
                    try await service.move(
                        id, move, by: account, deviceTime: body.deviceTime, changeId: body.changeId,
                        proofId: body.proofId)
                } refused: {
                    wire.courierSnapshot($0)
                }
                return try .json(wire.courierSnapshot(trip))
            })
        r.get(APIPath.Template.providerActiveTrips) { req in
            let account = try auth.account(for: req, roles: [.provider])
            let trips = service.activeTrips(provider: account.id).map(wire.courierSnapshot)
            return try .json(TripSnapshotList(trips: trips))
        }
        r.post(
            APIPath.Template.providerLocations,
            limited(.locations) { req in
                let account = try auth.account(for: req, roles: [.provider])
                let body = try LocationBatchJSON.decode(req) ?? req.decode(LocationBatch.self)
                guard !body.batchId.isEmpty else { throw HTTPError.invalid("/batchId", "must not be empty") }
                guard body.fixes.count <= 100 else { throw HTTPError.invalid("/fixes", "at most 100 fixes per batch") }
                for (i, fix) in body.fixes.enumerated() {
                    try map { try TripService.validate(fix.coordinate, "/fixes/\(i)") }
                    guard fix.accuracy >= 0, fix.accuracy.isFinite else {
                        throw HTTPError.invalid("/fixes/\(i)/accuracy", "must be a non-negative number")
                    }
                }
                do {
                    return try .json(try await providers.ingest.ingest(body, provider: account.id))
                } catch {
                    throw HTTPError.unavailable(
                        retryAfterSeconds: 1,
                        detail: "The batch could not be stored; send it again with the same batchId.")
                }
            })
    }

    /// Accepts an offer now: 200 with the trip, 409 with the real trip when it is over, 404 when it was never the
    /// caller's.
    private func acceptOffer(_ offerId: String, _ account: Account) async throws -> HTTPResponse {
        do {
            let trip = try await providers.dispatcher.accept(offerId: offerId, by: account.id)
            return try .json(wire.courierSnapshot(trip))
        } catch is OfferNotFound {
            throw HTTPError.notFound("No such offer.")
        } catch let error as TripError {
            throw APIErrors.httpError(error) { wire.courierSnapshot($0) }
        }
    }

    /// A provider's live stream: the live offer and active trips first, then offers, withdrawals and
    /// trip changes until the client leaves. SSE, or WebSocket on the same path.
    private func providerStream(_ req: HTTPRequest, provider: String) -> HTTPResponse {
        let providers = self.providers
        return .live(req) { emit in
            let updates = providers.events.subscribe(provider)
            for event in providers.resync(provider: provider) {
                try emit(LiveEvent(name: event.name, id: event.id, data: event.data))
            }
            for await event in updates { try emit(LiveEvent(name: event.name, id: event.id, data: event.data)) }
        }
    }

    /// The move a provider's step names for a trip of `kind`; 422 for a step of the other kind.
    static func providerStep(_ step: String, kind: TripKind) throws(HTTPError) -> TripMove {
        switch (kind, step) {
        case (.ride, "driverArrived"): return .ride(.driverArrived)
        case (.ride, "onTrip"): return .ride(.onTrip)
        case (.ride, "completed"): return .ride(.completed)
        case (.delivery, "onTheWay"): return .delivery(.onTheWay)
        case (.delivery, "arriving"): return .delivery(.arriving)
        case (.delivery, "delivered"): return .delivery(.delivered)
        case (_, "cancelled"): return .cancel(reason: "The provider gave up the trip")
        case (.ride, _):
            throw HTTPError.invalid("/step", "must be driverArrived, onTrip, completed or cancelled for a ride")
        case (.delivery, _):
            throw HTTPError.invalid("/step", "must be onTheWay, arriving, delivered or cancelled for a delivery")
        }
    }
}
