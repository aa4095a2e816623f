import Foundation
import Testing
import EnRouteAPI
import EnRouteBackend
import EnRouteDomain
import EnRouteModels
import EnRouteNotifications
import HTTPEngine
import TestSupport

/// The composition root: one configuration and one set of effects reach every part, and a backend is
/// released whole once stopped (no cycle between dispatch, the offer planner and the push sender).
@Suite struct BackendTests {
    static func configuration(_ storage: BackendConfiguration.Storage = .memory) -> BackendConfiguration {
        BackendConfiguration(storage: storage, secret: "backend-test-secret-0123456789")
    }

    static func effects(_ clock: ManualClock) -> BackendEffects {
        BackendEffects(
            clock: clock, now: { clock.date }, tripIDs: SequentialIDGenerator(prefix: "T"),
            offerIDs: SequentialIDGenerator(prefix: "O"),
            nearbyJitterSeed: 1, push: LogPushGateway(log: .discard), log: .discard)
    }

    /// A ride request for `customer` as the app makes one: a saved card, then the economy quote it names.
    static func quotedRide(_ backend: Backend, _ customer: String = "c1") async throws -> TripRequest {
        let pickup = Coordinate(lat: 60.17, lng: 24.94), dropoff = Coordinate(lat: 60.18, lng: 24.95)
        _ = try await backend.paymentMethods.add(token: "pm_card_visa", makeDefault: true, for: customer)
        let quotes = try await backend.payments.quotes.rideQuotes(
            pickup: pickup, dropoff: dropoff, for: Account(id: customer, role: .customer))
        let quote = try #require(quotes.first { $0.productID == "economy" })
        return TripRequest(pickup: pickup, dropoff: dropoff, productID: "economy", quoteId: quote.id)
    }

    static func get(_ backend: Backend, _ path: String, token: String? = nil) async -> HTTPResponse {
        var headers = HTTPHeaders()
        if let token { headers.add("Authorization", "Bearer \(token)") }
        return await backend.router.respond(to: HTTPRequest(method: "GET", path: path, headers: headers))
    }

    @Test func aStartedAndStoppedBackendIsReleasedWhole() async throws {
        weak var released: Backend?
        weak var sender: PushSender?
        do {
            let backend = try Backend(Self.configuration(), effects: Self.effects(ManualClock()))
            released = backend
            sender = backend.sender
            try await backend.start()
            await backend.stop()
        }
        #expect(released == nil, "the backend outlives its owner: a reference cycle")
        #expect(sender == nil, "the push sender outlives the backend: a reference cycle through the offer planner")
    }

    @Test func theConfigurationReachesTheAPI() async throws {
        var configuration = Self.configuration()
        configuration.openAPI = "openapi: 3.1.0\n"
        configuration.previousSecrets = ["retired-secret-0123456789abcdef"]
        let clock = ManualClock()
        let backend = try Backend(configuration, effects: Self.effects(clock))
        #expect(
            String(decoding: await Self.get(backend, "/openapi.yaml").bodyBytes, as: UTF8.self) == "openapi: 3.1.0\n")

        let retired = Authenticator(secret: "retired-secret-0123456789abcdef", now: { clock.date })
        let old = try retired.token(account: "c1", role: .customer)
        #expect(
            await Self.get(backend, "/v1/trips/active", token: old).status == 204,
            "a token of a previous secret still verifies")
        let stranger = try Authenticator(secret: "some-other-secret-0123456789", now: { clock.date }).token(
            account: "c1", role: .customer)
        #expect(await Self.get(backend, "/v1/trips/active", token: stranger).status == 401)
    }

    @Test func theEffectsReachTheDomain() async throws {
        let clock = ManualClock()
        let backend = try Backend(Self.configuration(), effects: Self.effects(clock))
        let trip = try await backend.service.requestRide(
            try await Self.quotedRide(backend), by: Account(id: "c1", role: .customer))
        #expect(trip.id == "T1", "trip ids come from the effects' generator")
        #expect(trip.createdAt == clock.date, "time comes from the effects' wall clock")
    }

    @Test func sqliteStorageKeepsTripsAcrossARestart() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "enroute-backend-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("enroute.sqlite").path
        let clock = ManualClock()
        do {
            let first = try Backend(Self.configuration(.sqlite(path: path)), effects: Self.effects(clock))
            #expect(first.schemaVersion != nil)
            _ = try await first.service.requestRide(
                try await Self.quotedRide(first), by: Account(id: "c1", role: .customer))
        }
        let second = try Backend(Self.configuration(.sqlite(path: path)), effects: Self.effects(clock))
        try await second.start()
        defer { Task { await second.stop() } }
        #expect(second.service.activeTrips(customer: "c1").map(\.id) == ["T1"])
    }
}
