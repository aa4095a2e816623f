import Foundation
import HTTPEngine
import EnRouteDomain
import EnRouteModels

/// The answer a share link's creator gets.
struct ShareLinkResponse: Codable, Sendable {
    let url: String
    let token: String
    let expiresAt: Date
}

/// What a share token opens to now.
enum ShareAccess: Sendable {
    case open(TripRecord)
    /// The trip ended more than `shareEndsAfter` ago, or the link's lifetime ran out.
    case ended
    /// The customer turned the link off.
    case revoked
    /// Not a link this server made.
    case invalid
}

extension WebSurfaces {
    func addShareRoutes(_ r: inout Router) {
        for (template, kind) in [
            (APIPath.Template.orderShare, TripKind.delivery), (APIPath.Template.tripShare, TripKind.ride),
        ] {
            r.post(template) { [self] req in try await createLink(req, kind: kind) }
            r.delete(template) { [self] req in
                let trip = try customerTrip(req, kind: kind)
                _ = try await links.revoke(tripId: trip.id)
                return .empty(204)
            }
        }
        r.get(APIPath.Template.sharePage) { [self] req in
            switch try access(req.parameter("token")) {
            case .open(let trip):
                return Self.page(
                    SharePage.html(
                        title: ShareView.make(trip, wire: wire, freshness: freshness, now: service.currentTime()).title)
                )
            case .ended:
                return Self.page(
                    SharePage.gone(
                        "This trip has ended", "The person who shared it has arrived, or the link has run out."),
                    status: 410)
            case .revoked:
                return Self.page(
                    SharePage.gone("This link was turned off", "The person who shared it stopped sharing this trip."),
                    status: 410)
            case .invalid:
                return Self.page(
                    SharePage.gone("This link is not valid", "Check that it was copied whole."), status: 404)
            }
        }
        r.get(APIPath.Template.shareState) { [self] req in
            let trip = try openTrip(req.parameter("token"))
            return try .json(ShareView.make(trip, wire: wire, freshness: freshness, now: service.currentTime()))
        }
        r.get(APIPath.Template.shareEvents) { [self] req in
            let token = try req.parameter("token")
            let trip = try openTrip(token)
            let now = service.currentTime()
            let first = ShareView.make(trip, wire: wire, freshness: freshness, now: now)
            // A browser that already has the final state stops reconnecting on 204, as on the trips' own streams.
            if first.ended, req.headers["Last-Event-ID"] == first.eventID { return .empty(204) }
            return .eventStream { [self] writer in try await streamShare(tripId: trip.id, token: token, writer: writer)
            }
        }
    }

    /// `POST …/share`: a signed link naming the trip's current generation, for its customer only.
    func createLink(_ req: HTTPRequest, kind: TripKind) async throws -> HTTPResponse {
        let trip = try customerTrip(req, kind: kind)
        guard trip.status.isActive else {
            throw HTTPError(
                status: 409, title: "Conflict", detail: "The trip has ended; there is nothing left to share.")
        }
        let expires = service.currentTime().addingTimeInterval(configuration.shareLinkLifetime)
        let token = shareSigner.sign(
            ShareClaims(t: trip.id, g: try links.generation(tripId: trip.id), e: Int64(expires.timeIntervalSince1970)))
        // From configuration only: a request's Host is the client's to choose.
        let url = (publicBase ?? "") + APIPath.share(token)
        return try .json(ShareLinkResponse(url: url, token: token, expiresAt: expires), status: 201)
    }

    /// The caller's own trip of `kind`: 404 for anyone else's, 403 for a role other than customer.
    func customerTrip(_ req: HTTPRequest, kind: TripKind) throws -> TripRecord {
        let account = try auth.account(for: req, roles: [.customer])
        guard let trip = try? service.trip(req.parameter("id"), for: account), trip.kind == kind else {
            throw HTTPError.notFound()
        }
        return trip
    }

    /// What `token` opens to now.
    func access(_ token: String) throws -> ShareAccess {
        guard let claims = shareSigner.verify(token, as: ShareClaims.self), let trip = try service.cached(claims.t)
        else { return .invalid }
        if try links.generation(tripId: trip.id) != claims.g { return .revoked }
        let now = service.currentTime()
        if now.timeIntervalSince1970 >= Double(claims.e) { return .ended }
        if !trip.status.isActive, now.timeIntervalSince(trip.updatedAt) >= configuration.shareEndsAfter {
            return .ended
        }
        return .open(trip)
    }

    /// The trip behind an open link; problem+json 404 or 410 otherwise.
    func openTrip(_ token: String) throws -> TripRecord {
        switch try access(token) {
        case .open(let trip): return trip
        case .ended: throw HTTPError(status: 410, title: "Gone", detail: "This trip has ended.")
        case .revoked: throw HTTPError(status: 410, title: "Gone", detail: "This link was turned off.")
        case .invalid: throw HTTPError.notFound("This link is not valid.")
        }
    }

    /// The share stream: the current view, then a new one on every change of the trip, every `shareTick`, and at
    /// the moment the wording would change by time alone (a pin dims when its fix turns 20 s old, not at the next
    /// tick). Ends once the link closes.
    func streamShare(tripId: String, token: String, writer: EventStreamWriter) async throws {
        let (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let updates = service.hub.subscribe(tripId)
        let clock = self.clock, tick = configuration.shareTick
        let feeders = [
            Task {
                for await _ in updates { signal.yield() }; signal.finish()
            },
            Task {
                while !Task.isCancelled { do { try await clock.sleep(for: tick) } catch { break }; signal.yield() }
            },
        ]
        // The moment of the next change by time alone, when it comes before the next tick.
        var boundary: Task<Void, Never>?
        defer { for feeder in feeders { feeder.cancel() }; boundary?.cancel(); signal.finish() }
        var last: ShareView?
        signal.yield()
        for await _ in signals {
            guard case .open(let trip) = try access(token) else {
                try writer.send(event: "closed", id: last?.eventID ?? "0", data: #"{"ended":true}"#)
                return
            }
            let now = service.currentTime()
            let view = ShareView.make(trip, wire: wire, freshness: freshness, now: now)
            if view.differs(from: last), let data = try? WireCoding.encoder().encode(view) {
                try writer.send(event: "share", id: view.eventID, data: String(decoding: data, as: UTF8.self))
                last = view
            } else {
                try writer.comment()
            }
            boundary?.cancel()
            boundary = nil
            if let wait = ShareView.untilNextChange(trip, freshness: freshness, now: now), wait < tick {
                boundary = Task {
                    do { try await clock.sleep(for: wait, tolerance: nil) } catch { return }; signal.yield()
                }
            }
        }
    }
}
