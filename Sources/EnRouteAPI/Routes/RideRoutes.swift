import HTTPEngine
import EnRouteDomain
import EnRouteModels

extension EnRouteAPI {
    /// The rider's routes: estimates, nearby drivers, requesting, reading, cancelling and following a ride.
    func addRideRoutes(_ r: inout Router) {
        r.post(
            APIPath.Template.estimates,
            limited(.estimates) { req in
                let account = try auth.account(for: req)
                let body = try req.decode(EstimateRequest.self)
                try map {
                    try TripService.validate(body.pickup, "/pickup"); try TripService.validate(body.dropoff, "/dropoff")
                }
                // Each estimate is a quote with an identity and a time limit, which the request then names.
                if let payments = service.payments {
                    let quotes = try await mapAsync {
                        try await payments.quotes.rideQuotes(
                            pickup: body.pickup, dropoff: body.dropoff, scheduledFor: body.scheduledFor, for: account)
                    }
                    return try .json(quotes.map(\.estimate))
                }
                let at = service.currentTime()
                try map { try BookingAhead.check(body.scheduledFor, now: at) }
                let estimates = try await mapAsync {
                    try await service.estimator.roadEstimates(
                        pickup: body.pickup, dropoff: body.dropoff, departure: body.scheduledFor ?? at)
                }
                return try .json(estimates)
            })
        r.get(APIPath.Template.nearbyDrivers) { req in
            _ = try auth.account(for: req)
            let center = Coordinate(
                lat: try Self.coordinateQuery(req, "lat", range: -90...90),
                lng: try Self.coordinateQuery(req, "lng", range: -180...180))
            return try .json(await providers.nearby(center))
        }
        r.post(
            APIPath.Template.trips,
            limited(
                .creates,
                idempotency.wrap(.required, render: rideRender(created: true)) { req in
                    let account = try auth.account(for: req, roles: [.customer])
                    let body = try req.decode(TripRequest.self)
                    return (account, { ctx in try await service.requestRide(body, by: account, idempotency: ctx) })
                }))
        r.get(APIPath.Template.activeTrip) { req in
            let account = try auth.account(for: req, roles: [.customer])
            guard let trip = service.activeTrips(customer: account.id).first(where: { $0.kind == .ride }) else {
                return .empty(204)
            }
            return try .json(wire.ride(trip, now: service.currentTime()))
        }
        r.get(APIPath.Template.trip) { req in
            let account = try auth.account(for: req)
            let trip = try trip(req.parameter("id"), account, kind: .ride)
            // The rider app's live channel connects its WebSocket to the trip itself; the same stream as /events.
            if req.isWebSocketUpgrade { return liveStreams.stream(req, trip: trip, for: account) }
            return try .json(wire.ride(trip, now: service.currentTime()))
        }
        addCancelAndEvents(
            &r, kind: .ride, cancel: APIPath.Template.tripCancel, events: APIPath.Template.tripEvents,
            render: rideRender(created: false),
            defaultReason: "cancelled by the rider")
    }

    /// A stored answer in the rider app's `Trip` shape.
    func rideRender(created: Bool) -> @Sendable (Result<TripRecord, TripError>) -> StoredResponse {
        { [wire, service] result in
            switch result {
            case .success(let trip):
                return APIErrors.stored(status: created ? 201 : 200, json: wire.ride(trip, now: service.currentTime()))
            case .failure(let error):
                return APIErrors.stored(APIErrors.httpError(error) { wire.ride($0, now: service.currentTime()) })
            }
        }
    }
}
