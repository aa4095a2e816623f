import Foundation
import HTTPEngine
import EnRouteDomain
import EnRouteModels

extension EnRouteAPI {
    /// Issue 12 guidance: the provider's route to the next stop with its maneuvers, and the remaining route the
    /// customer's map draws (the ride tracking screen's `routeData`), both computed on the road network when asked.
    func addGuidanceRoutes(_ r: inout Router) {
        r.get(APIPath.Template.providerTripRoute) { req in
            let account = try auth.account(for: req, roles: [.provider])
            let trip = try map { try service.trip(try req.parameter("id"), for: account) }
            let roads = try Self.roadNetwork(roads)
            guard let stop = Self.nextStop(trip) else { throw Self.tripEnded(trip) }
            let (from, heading) = try Self.providerPosition(req, trip)
            let to = stop == .pickup ? trip.pickup : trip.dropoff
            let now = service.currentTime()
            let names = ["The position \(from.lat),\(from.lng)", stop == .pickup ? "The pickup" : "The drop-off"]
            let leg = try await Self.leg(roads, from: from, heading: heading, to: to, departure: now, names: names)
            return try .json(
                ProviderRoute(
                    tripId: trip.id, stop: stop, from: from, to: to, distanceMeters: leg.distanceMeters,
                    durationSeconds: leg.durationSeconds, polyline: Polyline.encode(leg.geometry, precision: 6),
                    steps: leg.steps, computedAt: now))
        }
        for (template, kind) in [(APIPath.Template.tripRoute, TripKind.ride), (APIPath.Template.orderRoute, .delivery)]
        {
            r.get(template) { req in
                let account = try auth.account(for: req)
                let trip = try trip(req.parameter("id"), account, kind: kind)
                let roads = try Self.roadNetwork(roads)
                return try .json(try await Self.remainingRoute(trip, roads: roads, departure: service.currentTime()))
            }
        }
    }

    /// Fixes slower than this (m/s) carry no usable heading: a phone standing still reports north or noise.
    static let headingMinimumSpeed = 1.0

    /// The stop a trip's provider drives to next; nil once the trip has ended.
    ///
    /// A ride leads to the pickup until the driver has arrived there, then to the drop-off; a delivery to the
    /// merchant (its pickup) until it is on the way, then to the customer.
    static func nextStop(_ trip: TripRecord) -> RouteStop? {
        switch trip.status {
        case .ride(.searching), .ride(.driverAssigned), .delivery(.placed), .delivery(.picking): .pickup
        case .ride(.driverArrived), .ride(.onTrip), .delivery(.onTheWay), .delivery(.arriving): .dropoff
        case .ride(.completed), .ride(.cancelled), .ride(.noDriversFound), .delivery(.delivered), .delivery(.cancelled):
            nil
        }
    }

    /// The road network, or 503 when the server runs without one.
    static func roadNetwork(_ roads: (any RoadRouting)?) throws(HTTPError) -> any RoadRouting {
        guard let roads else {
            var error = HTTPError.unavailable(
                retryAfterSeconds: 60,
                detail:
                    "This server has no road network configured (start it with --graph), so it cannot compute routes.")
            error.problem.type = "https://enroute.invalid/problems/no-road-network"
            throw error
        }
        return roads
    }

    /// 409: an ended trip has no stop left to drive to.
    static func tripEnded(_ trip: TripRecord) -> HTTPError {
        HTTPError(
            status: 409, title: "Conflict",
            detail: "The trip has ended (\(trip.status.name)); there is no stop left to route to.",
            type: "https://enroute.invalid/problems/trip-ended")
    }

    /// Where the provider's route starts: `?from=lat,lng` (with `&heading=`) when given, else the provider's latest
    /// fix on the trip; 422 when there is neither.
    static func providerPosition(_ req: HTTPRequest, _ trip: TripRecord) throws(HTTPError) -> (Coordinate, Double?) {
        if let text = req.query["from"] {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2, let lat = Double(parts[0]), let lng = Double(parts[1]),
                Coordinate(lat: lat, lng: lng).isValid
            else {
                throw HTTPError.invalid(
                    "/from", "must be lat,lng with a latitude in -90...90 and a longitude in -180...180")
            }
            var heading: Double?
            if let text = req.query["heading"] {
                guard let value = Double(text), value.isFinite, (0...360).contains(value) else {
                    throw HTTPError.invalid("/heading", "must be degrees from north, 0 to 360")
                }
                heading = value
            }
            return (Coordinate(lat: lat, lng: lng), heading)
        }
        guard let fix = trip.providerFix else {
            throw HTTPError.invalid(
                "/from",
                "no position of yours is known on this trip yet; send one (?from=lat,lng) or upload a fix first")
        }
        return (fix.coordinate, fix.speed >= headingMinimumSpeed ? fix.heading : nil)
    }

    /// One road leg, the engine's refusals as problems (`roadError`); `names` name the start and the stop.
    static func leg(
        _ roads: any RoadRouting, from: Coordinate, heading: Double?, to: Coordinate, departure: Date,
        names: [String]
    ) async throws(HTTPError) -> RoadLeg {
        do {
            return try await roads.route(from: from, to: to, heading: heading, departure: departure)
        } catch {
            throw roadError(error, names: names)
        }
    }

    /// A road engine's refusal as problem+json: 422 when a point is off the roads (`names[index]` says which) or no
    /// road joins the points, 503 when the engine cannot answer.
    static func roadError(_ error: RoadRoutingError, names: [String]) -> HTTPError {
        switch error {
        case .noSegment(let index):
            let name = names.indices.contains(index) ? names[index] : "a point of the route"
            return HTTPError(
                status: 422, title: "Unprocessable Content", detail: "\(name) is not near a road a car can drive.",
                type: "https://enroute.invalid/problems/no-segment")
        case .noRoute:
            return HTTPError(
                status: 422, title: "Unprocessable Content",
                detail: "No road route joins \(names.joined(separator: " and ")).",
                type: "https://enroute.invalid/problems/no-route")
        case .unavailable(let detail):
            var e = HTTPError.unavailable(retryAfterSeconds: 5, detail: "The road engine could not answer: \(detail)")
            e.problem.type = "https://enroute.invalid/problems/road-engine-unavailable"
            return e
        }
    }

    /// The route still to drive, as the customer's map draws it: from the provider's latest fix (when assigned and
    /// known) through the pickup when not yet picked up, to the drop-off; without a fix, pickup to drop-off.
    /// A provider fix off the roads (a car park, a GPS jump) falls back to pickup to drop-off; an ended trip is 409.
    static func remainingRoute(
        _ trip: TripRecord, roads: any RoadRouting, departure: Date
    ) async throws(HTTPError) -> [Coordinate] {
        guard let stop = nextStop(trip) else { throw tripEnded(trip) }
        let plain = [trip.pickup, trip.dropoff]
        if trip.providerId != nil, let fix = trip.providerFix {
            let heading = fix.speed >= headingMinimumSpeed ? fix.heading : nil
            let points = [fix.coordinate] + (stop == .pickup ? plain : [trip.dropoff])
            do {
                return try await roadPolyline(through: points, heading: heading, roads: roads, departure: departure)
            } catch .noSegment {
                // The fix off the roads: draw from the pickup. A stop off the roads: the plain route below says which.
            } catch {
                throw roadError(error, names: ["The provider's position", "the trip's stops"])
            }
        }
        do {
            return try await roadPolyline(through: plain, heading: nil, roads: roads, departure: departure)
        } catch {
            throw roadError(error, names: ["The pickup", "The drop-off"])
        }
    }

    /// The road geometry through `points` in order, legs joined without repeating their shared point; a `noSegment`
    /// names the index in `points`.
    private static func roadPolyline(
        through points: [Coordinate], heading: Double?, roads: any RoadRouting,
        departure: Date
    ) async throws(RoadRoutingError) -> [Coordinate] {
        var line: [Coordinate] = []
        for (index, (a, b)) in zip(points, points.dropFirst()).enumerated() {
            let leg: RoadLeg
            do {
                leg = try await roads.route(from: a, to: b, heading: index == 0 ? heading : nil, departure: departure)
            } catch .noSegment(let which) {
                throw .noSegment(index: index + which)
            }
            line += line.last == leg.geometry.first ? leg.geometry.dropFirst() : leg.geometry[...]
        }
        return line
    }
}
