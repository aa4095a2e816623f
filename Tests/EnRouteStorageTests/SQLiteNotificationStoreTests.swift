import Foundation
import Testing
import EnRouteNotifications
import EnRouteSQLite
import SQLiteClient

/// `SQLiteNotificationStore` and the `SQLiteNotificationRepository` over it, against a real file.
@Suite(.timeLimit(.minutes(1))) struct SQLiteNotificationStoreTests {
    static let t0 = Date(timeIntervalSince1970: 1_792_520_000)

    static func device(
        _ token: String, account: String = "c1", at offset: TimeInterval = 0, key: [UInt8]? = [7, 7, 7]
    ) -> DeviceRecord {
        .init(
            token: token, accountId: account, platform: "ios", environment: .production, appVersion: "1.2.0",
            publicKey: key,
            registeredAt: t0.addingTimeInterval(offset))
    }

    static func sent(_ id: String, account: String = "c1", stage: String = "onTheWay") -> SentNotification {
        .init(id: id, accountId: account, campaign: "orderUpdates", stage: stage, sentAt: t0)
    }

    // MARK: - Devices

    @Test func aDeviceIsKeptWithEveryFieldAndMovesWhenAnotherAccountRegistersItsToken() throws {
        let db = try TemporaryDatabase("notifications")
        defer { db.remove() }
        let store = try SQLiteNotificationStore(path: db.path)
        try store.upsert(Self.device("tok-a"))
        try store.upsert(Self.device("tok-b", key: nil))
        #expect(try store.device(token: "tok-a") == Self.device("tok-a"))
        #expect(try store.device(token: "tok-b")?.publicKey == nil)
        try store.upsert(Self.device("tok-a", account: "c2", at: 60))
        #expect(try store.devices(accountId: "c1").map(\.token) == ["tok-b"])
        #expect(try store.devices(accountId: "c2") == [Self.device("tok-a", account: "c2", at: 60)])
        #expect(try store.device(token: "unknown") == nil)
    }

    @Test func anAccountsDevicesComeNewestRegistrationFirst() throws {
        let db = try TemporaryDatabase("notifications")
        defer { db.remove() }
        let store = try SQLiteNotificationStore(path: db.path)
        try store.upsert(Self.device("tok-1", at: 10))
        try store.upsert(Self.device("tok-2", at: 30))
        try store.upsert(Self.device("tok-3", at: 20))
        try store.upsert(Self.device("tok-1", at: 40))  // registered again: newest now
        #expect(try store.devices(accountId: "c1").map(\.token) == ["tok-1", "tok-2", "tok-3"])
    }

    @Test func onlyTheOwningAccountDeletesAToken() throws {
        let db = try TemporaryDatabase("notifications")
        defer { db.remove() }
        let store = try SQLiteNotificationStore(path: db.path)
        try store.upsert(Self.device("tok-a"))
        #expect(try store.delete(token: "tok-a", accountId: "c2") == false)
        #expect(try store.device(token: "tok-a") != nil)
        #expect(try store.delete(token: "tok-a", accountId: "c1") == true)
        #expect(try store.delete(token: "tok-a", accountId: "c1") == false)
    }

    @Test func anInvalidTokenIsDeletedOnlyIfNotRegisteredAfterTheCutoff() throws {
        let db = try TemporaryDatabase("notifications")
        defer { db.remove() }
        let store = try SQLiteNotificationStore(path: db.path)
        try store.upsert(Self.device("tok-a", at: 100))
        #expect(
            try store.delete(token: "tok-a", registeredNotAfter: Self.t0.addingTimeInterval(99)) == false,
            "registered again since")
        #expect(
            try store.delete(token: "tok-a", registeredNotAfter: Self.t0.addingTimeInterval(100)) == true,
            "the cutoff itself counts")
        #expect(try store.device(token: "tok-a") == nil)
    }

    // MARK: - Sent notifications and opens

    @Test func anOpenCountsOnceAndOnlyForItsOwnAccount() throws {
        let db = try TemporaryDatabase("notifications")
        defer { db.remove() }
        let store = try SQLiteNotificationStore(path: db.path)
        try store.insert(Self.sent("O1.3"))
        // ignored: the id exists
        try store.insert(.init(id: "O1.3", accountId: "c9", campaign: "other", stage: "other", sentAt: Self.t0))
        #expect(try store.markOpened(id: "O1.3", accountId: "c2", action: "open", at: Self.t0) == .unknown)
        #expect(try store.markOpened(id: "nope", accountId: "c1", action: "open", at: Self.t0) == .unknown)
        #expect(
            try store.markOpened(id: "O1.3", accountId: "c1", action: "open", at: Self.t0)
                == .firstOpen(Self.sent("O1.3")))
        #expect(try store.markOpened(id: "O1.3", accountId: "c1", action: "open", at: Self.t0) == .repeated)
        // A restart remembers the open.
        #expect(
            try SQLiteNotificationStore(path: db.path).markOpened(
                id: "O1.3", accountId: "c1", action: "open", at: Self.t0) == .repeated)
    }

    @Test func theTablesShareTheTripStoresFile() async throws {
        let db = try TemporaryDatabase("notifications")
        defer { db.remove() }
        let trips = try SQLiteTripStore(path: db.path)
        let notifications = try SQLiteNotificationStore(path: db.path)
        try await trips.transaction { tx in try await tx.insert(Rows.ride("T1")) }
        try notifications.upsert(Self.device("tok-a"))
        #expect(try SQLiteTripStore(path: db.path).trip(id: "T1") != nil)
        #expect(try SQLiteNotificationStore(path: db.path).device(token: "tok-a") == Self.device("tok-a"))
    }

    // MARK: - The repository

    @Test func theRepositoryMapsDevicesAndOpensToTheNotificationsTypes() async throws {
        let db = try TemporaryDatabase("notifications")
        defer { db.remove() }
        let repository = try SQLiteNotificationRepository(path: db.path)
        let sandbox = DeviceRecord(
            token: "tok-s", accountId: "c1", platform: "ios", environment: .sandbox, appVersion: "1.0",
            publicKey: nil, registeredAt: Self.t0)
        let production = DeviceRecord(
            token: "tok-p", accountId: "c1", platform: "ios", environment: .production, appVersion: "1.1",
            publicKey: Array(repeating: 7, count: 32), registeredAt: Self.t0.addingTimeInterval(5))
        try await repository.register(sandbox)
        try await repository.register(production)
        #expect(try await repository.devices(accountId: "c1") == [production, sandbox])
        #expect(try await repository.device(token: "tok-s") == sandbox)

        let sent = SentNotification(
            id: "O1.4", accountId: "c1", campaign: "orderUpdates", stage: "arriving", sentAt: Self.t0)
        try await repository.recordSent(sent)
        #expect(
            try await repository.recordOpen(id: "O1.4", accountId: "c1", action: "open", at: Self.t0)
                == .firstOpen(sent))
        #expect(try await repository.recordOpen(id: "O1.4", accountId: "c1", action: "open", at: Self.t0) == .repeated)
        #expect(try await repository.recordOpen(id: "O1.4", accountId: "c2", action: "open", at: Self.t0) == .unknown)

        #expect(try await repository.remove(token: "tok-s", accountId: "c2") == false)
        #expect(try await repository.remove(token: "tok-s", accountId: "c1") == true)
        #expect(try await repository.removeUnlessRegistered(after: Self.t0, token: "tok-p") == false)
        #expect(
            try await repository.removeUnlessRegistered(after: Self.t0.addingTimeInterval(5), token: "tok-p") == true)
        #expect(try await repository.devices(accountId: "c1").isEmpty)
    }

    @Test func anUnknownStoredEnvironmentReadsAsProductionAndDevelopmentAsSandbox() async throws {
        let db = try TemporaryDatabase("notifications")
        defer { db.remove() }
        let store = try SQLiteNotificationStore(path: db.path)
        // Rows this server never writes (an older build's, or a hand edit), put there with plain SQL.
        let raw = try SQLiteDatabase(path: db.path)
        for (token, environment) in [("tok-dev", "development"), ("tok-odd", "staging")] {
            try raw.run(
                """
                INSERT INTO push_devices (token, account_id, platform, environment, app_version, public_key, \
                registered_at)
                VALUES (?1, 'c1', 'ios', ?2, '1', NULL, ?3)
                """, [.text(token), .text(environment), .real(Self.t0.timeIntervalSince1970)])
        }
        let repository = SQLiteNotificationRepository(store: store)
        #expect(try await repository.device(token: "tok-dev")?.environment == .sandbox)
        #expect(try await repository.device(token: "tok-odd")?.environment == .production)
    }
}
