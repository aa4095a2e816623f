import Foundation
import HTTPEngine
import EnRouteDomain
import EnRouteModels

/// The console's live city at one moment.
struct OpsOverview: Codable, Sendable {
    struct ProviderDot: Codable, Sendable {
        let id: String
        let lat: Double?
        let lng: Double?
        let busy: Bool
    }
    struct TripDot: Codable, Sendable {
        let id: String
        let kind: String
        let status: String
        let providerId: String?
        let pickup: Coordinate
        let dropoff: Coordinate
        let position: Coordinate?
        /// A trip booked ahead whose search has not begun: when it is due at the pickup.
        var bookedFor: Date? = nil
    }
    let now: Date
    let counts: [String: Int]
    let providers: [ProviderDot]
    let trips: [TripDot]
    /// Zones counted, busiest first, with the multiplier a quote there gets now.
    var zones: [ZoneLevel] = []
}

/// One trip as the console shows it.
struct OpsTripDetail: Codable, Sendable {
    struct Change: Codable, Sendable {
        let version: Int
        let status: String
        let actor: String
        let serverTime: Date
        let deviceTime: Date?
    }
    struct Point: Codable, Sendable {
        let lat: Double
        let lng: Double
        let recordedAt: Date
        let receivedAt: Date
    }
    struct Payment: Codable, Sendable {
        let state: String
        let currency: String
        let heldMinor: Int
        let capturedMinor: Int
        let owedMinor: Int
    }
    let trip: TripSnapshot
    let customerId: String
    let changes: [Change]
    let path: [Point]
    let offers: [OpsJournal.Entry]
    let pushes: [OpsJournal.Entry]
    let payment: Payment?
}

/// One provider as the console shows it.
struct OpsProviderActivity: Codable, Sendable {
    let id: String
    let name: String
    let online: Bool
    let position: Coordinate?
    let positionAt: Date?
    let activeTrips: [String]
    let liveOffer: String?
}

extension WebSurfaces {
    static let consoleCookie = "enroute_ops"

    func addConsoleRoutes(_ r: inout Router) {
        r.get(APIPath.Template.opsConsole) { _ in Self.page(ConsolePage.html) }
        r.post(APIPath.Template.opsConsoleSession) { [self] req in
            let account = try auth.account(for: req, roles: [.ops])
            let lifetime = configuration.consoleCookieLifetime
            let expires = service.currentTime().addingTimeInterval(lifetime)
            let cookie = consoleSigner.sign(ConsoleClaims(s: account.id, e: Int64(expires.timeIntervalSince1970)))
            var response = HTTPResponse.empty(204)
            let secure = isPublicHTTPS ? "; Secure" : ""
            let attributes = "Path=/ops; Max-Age=\(Int(lifetime)); HttpOnly; SameSite=Strict\(secure)"
            response.headers.add("Set-Cookie", "\(Self.consoleCookie)=\(cookie); \(attributes)")
            response.headers.add("Cache-Control", "no-store")
            return response
        }
        r.get(APIPath.Template.opsConsoleEvents) { [self] req in
            try consoleAccount(req)
            return .eventStream { [self] writer in
                let signals = consoleSignals.subscribe()
                let clock = self.clock, tick = configuration.consoleTick, signals2 = consoleSignals
                let ticker = Task {
                    while !Task.isCancelled {
                        do { try await clock.sleep(for: tick) } catch { break }; signals2.signal()
                    }
                }
                defer { ticker.cancel() }
                var sent = 0
                try send(await overview(), writer: writer, id: &sent)
                for await _ in signals { try send(await overview(), writer: writer, id: &sent) }
            }
        }
        r.get(APIPath.Template.opsOverview) { [self] req in
            _ = try auth.account(for: req, roles: [.ops])
            return try .json(await overview())
        }
        r.get(APIPath.Template.opsTrip) { [self] req in
            _ = try auth.account(for: req, roles: [.ops])
            guard let trip = try service.cached(req.parameter("id")) else { throw HTTPError.notFound("No such trip.") }
            return try .json(await detail(trip))
        }
        r.get(APIPath.Template.opsProviderActivity) { [self] req in
            _ = try auth.account(for: req, roles: [.ops])
            let id = try req.parameter("id")
            let position: ProviderPresence.Position?, online: Bool
            do {
                position = try await providers.presence.position(of: id)
                online = try await providers.presence.isOnline(id)
            } catch {
                throw error as? ProviderLocationsUnavailable ?? ProviderLocationsUnavailable("\(error)")
            }
            let active = service.activeTrips(provider: id)
            guard online || position != nil || !active.isEmpty else { throw HTTPError.notFound("No such provider.") }
            return try .json(
                OpsProviderActivity(
                    id: id, name: wire.directory.provider(id: id).firstName, online: online,
                    position: position?.coordinate, positionAt: position?.recordedAt,
                    activeTrips: active.map(\.id), liveOffer: providers.dispatcher.liveOffer(heldBy: id)?.offerId))
        }
    }

    /// The console's cookie (or an ops bearer token): 401 without either.
    @discardableResult
    func consoleAccount(_ req: HTTPRequest) throws -> String {
        if req.headers["Authorization"] != nil { return try auth.account(for: req, roles: [.ops]).id }
        let cookies = (req.headers["Cookie"] ?? "").split(separator: ";").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard
            let value = cookies.first(where: { $0.hasPrefix(Self.consoleCookie + "=") })?.dropFirst(
                Self.consoleCookie.count + 1),
            let claims = consoleSigner.verify(String(value), as: ConsoleClaims.self),
            service.currentTime().timeIntervalSince1970 < Double(claims.e)
        else {
            throw HTTPError.unauthorized(
                "Open the console with an ops token: POST /ops/session with it gives the console's cookie.")
        }
        return claims.s
    }

    private func send(_ overview: OpsOverview, writer: EventStreamWriter, id: inout Int) throws {
        id += 1
        let data = (try? WireCoding.encoder().encode(overview)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        try writer.send(event: "overview", id: "\(id)", data: data)
    }

    /// What the console draws; without the providers (and their count) while the provider locations cannot be read.
    func overview() async -> OpsOverview {
        let trips = service.activeTrips()
        var counts: [String: Int] = [:]
        for trip in trips { counts["\(trip.kind == .ride ? "ride" : "order").\(trip.status.name)", default: 0] += 1 }
        let busy = Set(trips.compactMap(\.providerId))
        let online = try? await providers.presence.onlineProviders()
        if let online { counts["providers.online"] = online.count }
        return OpsOverview(
            now: service.currentTime(), counts: counts,
            providers: (online ?? []).map {
                OpsOverview.ProviderDot(
                    id: $0.id, lat: $0.position?.coordinate.lat, lng: $0.position?.coordinate.lng,
                    busy: busy.contains($0.id))
            },
            trips: trips.prefix(5_000).map {
                OpsOverview.TripDot(
                    id: $0.id, kind: $0.kind == .ride ? "ride" : "delivery", status: $0.status.name,
                    providerId: $0.providerId, pickup: $0.pickup, dropoff: $0.dropoff,
                    position: $0.providerFix?.shown, bookedFor: $0.isBookedAhead ? $0.scheduledFor : nil)
            },
            zones: Array(zoneLevels.get()().prefix(500)))
    }

    func detail(_ trip: TripRecord) async throws -> OpsTripDetail {
        let changes = try service.store.changes(tripId: trip.id).map {
            OpsTripDetail.Change(
                version: $0.version, status: $0.status, actor: "\($0.actorRole.rawValue) \($0.actorId)",
                serverTime: $0.serverTime, deviceTime: $0.deviceTime)
        }
        let path = try await paths.path(tripId: trip.id).map {
            OpsTripDetail.Point(lat: $0.lat, lng: $0.lng, recordedAt: $0.recordedAt, receivedAt: $0.receivedAt)
        }
        let journal = journal.entries(tripId: trip.id)
        let payment = trip.payment.map {
            OpsTripDetail.Payment(
                state: $0.state.rawValue, currency: $0.currency, heldMinor: $0.heldMinor,
                capturedMinor: $0.capturedMinor, owedMinor: $0.owedMinor)
        }
        return OpsTripDetail(
            trip: wire.snapshot(trip), customerId: trip.customerId, changes: changes, path: path,
            offers: journal.filter { $0.kind == "offer" }, pushes: journal.filter { $0.kind == "push" },
            payment: payment)
    }
}
