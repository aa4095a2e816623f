import Foundation
import Testing
import EnRouteCrypto
import EnRouteNotifications
import EnRouteAPNs
import EnRouteDomain
import EnRouteAPI
import EnRouteSQLite
import HTTPEngine
import TestSupport
import EnRouteBackend

@Suite struct NotificationsAPITests {
    static let token = String(repeating: "ab", count: 32)
    static let publicKey = Data(repeating: 7, count: 32).base64EncodedString()

    struct SUT {
        let backend: TestBackend
        let router: Router
        let devices: any DeviceRepository
        let ledger: any NotificationLedger
        let metrics: MetricsRegistry

        func call(_ method: String, _ path: String, as account: String, json: String? = nil) async -> Int {
            var headers = HTTPHeaders([("Authorization", "Bearer \(backend.token(account, .customer))")])
            if json != nil { headers.add("Content-Type", "application/json") }
            return await router.respond(
                to: HTTPRequest(method: method, path: path, headers: headers, body: Array((json ?? "").utf8))
            ).status
        }
    }

    /// The production backend over `storage`: its device routes, repositories and metrics.
    static func makeSUT(storage: BackendConfiguration.Storage = .memory) -> SUT {
        let backend = TestBackend(storage: storage)
        return SUT(
            backend: backend, router: backend.router, devices: backend.backend.devices, ledger: backend.backend.ledger,
            metrics: backend.metrics)
    }

    static func body(environment: String = "production") -> String {
        #"{"platform":"ios","environment":"\#(environment)","appVersion":"4.2.0","publicKey":"\#(publicKey)"}"#
    }

    @Test func registeringADeviceIsSafeToRepeatAndKeepsTheTime() async throws {
        let sut = Self.makeSUT()
        #expect(await sut.call("PUT", "/v1/devices/\(Self.token)", as: "c1", json: Self.body()) == 204)
        await sut.backend.clock.advance(by: .seconds(30))
        #expect(await sut.call("PUT", "/v1/devices/\(Self.token)", as: "c1", json: Self.body()) == 204)
        let record = try #require(try await sut.devices.device(token: Self.token))
        #expect(record.accountId == "c1" && record.environment == .production && record.appVersion == "4.2.0")
        #expect(record.publicKey == Array(Data(repeating: 7, count: 32)))
        #expect(record.registeredAt == sut.backend.clock.date)
        #expect(try await sut.devices.devices(accountId: "c1").count == 1)
    }

    @Test func aTokenBelongsToOneAccountAtATime() async throws {
        let sut = Self.makeSUT()
        #expect(await sut.call("PUT", "/v1/devices/\(Self.token)", as: "c1", json: Self.body()) == 204)
        #expect(
            await sut.call("PUT", "/v1/devices/\(Self.token)", as: "c2", json: Self.body(environment: "sandbox")) == 204
        )
        #expect(try await sut.devices.devices(accountId: "c1").isEmpty)
        #expect(try await sut.devices.devices(accountId: "c2").map(\.environment) == [.sandbox])
    }

    @Test func deletingRemovesOnlyTheCallersToken() async throws {
        let sut = Self.makeSUT()
        #expect(await sut.call("PUT", "/v1/devices/\(Self.token)", as: "c1", json: Self.body()) == 204)
        #expect(await sut.call("DELETE", "/v1/devices/\(Self.token)", as: "c2") == 204)
        #expect(try await sut.devices.device(token: Self.token) != nil)
        #expect(await sut.call("DELETE", "/v1/devices/\(Self.token)", as: "c1") == 204)
        #expect(try await sut.devices.device(token: Self.token) == nil)
        #expect(await sut.call("DELETE", "/v1/devices/\(Self.token)", as: "c1") == 204, "repeatable")
    }

    @Test(arguments: [
        (#"{"platform":"android","environment":"production","appVersion":"1"}"#, 422),
        (#"{"platform":"ios","environment":"staging","appVersion":"1"}"#, 422),
        (#"{"platform":"ios","environment":"production","appVersion":"1","publicKey":"c2hvcnQ="}"#, 422),
        (#"{"platform":"ios"}"#, 422),
        ("not json", 400),
    ])
    func badRegistrationsAreRefused(body: String, status: Int) async {
        let sut = Self.makeSUT()
        #expect(await sut.call("PUT", "/v1/devices/\(Self.token)", as: "c1", json: body) == status)
    }

    @Test func aTokenThatIsNotHexIsRefusedAndNoTokenIsUnauthorized() async {
        let sut = Self.makeSUT()
        #expect(await sut.call("PUT", "/v1/devices/not-a-token-at-all", as: "c1", json: Self.body()) == 422)
        let anonymous = await sut.router.respond(
            to: HTTPRequest(method: "PUT", path: "/v1/devices/\(Self.token)", body: Array(Self.body().utf8)))
        #expect(anonymous.status == 401)
    }

    @Test func opensAreCountedOncePerNotificationByCampaignAndStage() async throws {
        let sut = Self.makeSUT()
        try await sut.ledger.recordSent(
            SentNotification(
                id: "O1.3", accountId: "c1", campaign: "orderUpdates", stage: "onTheWay",
                sentAt: sut.backend.clock.date))
        #expect(
            await sut.call("POST", "/v1/notifications/O1.3/opened", as: "c1", json: #"{"action":"trackOrder"}"#) == 204)
        #expect(await sut.call("POST", "/v1/notifications/O1.3/opened", as: "c1", json: #"{"action":"open"}"#) == 204)
        #expect(
            sut.metrics.counter(
                NotificationsAPI.opensMetric, labels: ["campaign": "orderUpdates", "stage": "onTheWay"]) == 1)
        #expect(
            sut.metrics.render().contains(
                #"enroute_notification_opens_total{campaign="orderUpdates",stage="onTheWay"} 1"#))
    }

    @Test func anotherAccountsOrAnUnknownNotificationIsNotFound() async throws {
        let sut = Self.makeSUT()
        try await sut.ledger.recordSent(
            SentNotification(
                id: "O1.3", accountId: "c1", campaign: "orderUpdates", stage: "onTheWay",
                sentAt: sut.backend.clock.date))
        #expect(await sut.call("POST", "/v1/notifications/O1.3/opened", as: "c2", json: #"{"action":"open"}"#) == 404)
        #expect(await sut.call("POST", "/v1/notifications/nope/opened", as: "c1", json: #"{"action":"open"}"#) == 404)
        #expect(await sut.call("POST", "/v1/notifications/O1.3/opened", as: "c1", json: #"{"action":"dance"}"#) == 422)
        #expect(
            sut.metrics.counter(
                NotificationsAPI.opensMetric, labels: ["campaign": "orderUpdates", "stage": "onTheWay"]) == 0)
    }

    @Test func theStoredRepositoryKeepsDevicesAndOpensAcrossReopening() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).sqlite")
            .path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let sut = Self.makeSUT(storage: .sqlite(path: path))  // devices live in the trip store's file
        #expect(await sut.call("PUT", "/v1/devices/\(Self.token)", as: "c1", json: Self.body()) == 204)
        try await sut.ledger.recordSent(
            SentNotification(
                id: "O1.3", accountId: "c1", campaign: "orderUpdates", stage: "arriving",
                sentAt: sut.backend.clock.date))
        #expect(await sut.call("POST", "/v1/notifications/O1.3/opened", as: "c1", json: #"{"action":"open"}"#) == 204)

        // A restart on the same database (SQLite, or its PostgreSQL schema under ENROUTE_TEST_STORE=postgres).
        let restarted = TestBackend(storage: .sqlite(path: path)).backend
        let reopened = restarted.devices
        let device = try #require(try await reopened.device(token: Self.token))
        #expect(
            device.accountId == "c1" && device.publicKey?.count == 32 && device.registeredAt == sut.backend.clock.date)
        #expect(
            try await restarted.ledger.recordOpen(
                id: "O1.3", accountId: "c1", action: "open", at: sut.backend.clock.date) == .repeated)
        #expect(
            try await reopened.removeUnlessRegistered(
                after: sut.backend.clock.date.addingTimeInterval(-1), token: Self.token) == false)
        #expect(try await reopened.removeUnlessRegistered(after: sut.backend.clock.date, token: Self.token) == true)
    }
}
