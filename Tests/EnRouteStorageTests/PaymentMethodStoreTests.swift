import Foundation
import Testing
import EnRouteDomain
import EnRouteSQLite
import EnRoutePostgres

/// Both payment method stores keep the same rules (one default, a token once per account, the limit), also under
/// concurrent calls; the SQLite one keeps them across a reopen.
@Suite(.timeLimit(.minutes(1))) struct PaymentMethodStoreTests {
    enum Kind: String, CaseIterable, Sendable {
        case memory, sqlite, postgres
        /// Memory and SQLite, and PostgreSQL when ENROUTE_TEST_POSTGRES_URL names a server.
        static var configured: [Kind] { [.memory, .sqlite] + (PostgresTestServer.url == nil ? [] : [.postgres]) }
    }

    /// A store of `kind` and a cleanup.
    static func makeSUT(_ kind: Kind) throws -> (any PaymentMethodStore, @Sendable () -> Void) {
        switch kind {
        case .memory:
            return (InMemoryPaymentMethodStore(), {})
        case .sqlite:
            let database = try TemporaryDatabase("methods")
            return (
                try SQLitePaymentMethodStore(tripStore: SQLiteTripStore(path: database.path)), { database.remove() }
            )
        case .postgres:
            let url = PostgresTestServer.url ?? "", schema = PostgresTestServer.freshSchema("methods")
            return (
                try PostgresPaymentMethodStore(tripStore: PostgresTripStore(url: url, schema: schema)),
                { PostgresTestServer.drop(schema, url: url) }
            )
        }
    }

    static func method(
        _ id: String, account: String = "c1", token: String? = nil, isDefault: Bool = false, at offset: TimeInterval = 0
    ) -> StoredPaymentMethod {
        StoredPaymentMethod(
            id: id, accountId: account, token: token ?? "pm_\(id)",
            card: CardDetails(brand: "visa", last4: "4242", expMonth: 12, expYear: 2034),
            isDefault: isDefault, createdAt: Rows.t0.addingTimeInterval(offset))
    }

    @Test(arguments: Kind.configured)
    func theFirstMethodIsTheDefaultAndAnotherBecomesItOnlyWhenAsked(_ kind: Kind) async throws {
        let (store, cleanup) = try Self.makeSUT(kind)
        defer { cleanup() }
        #expect(try await store.add(Self.method("a"), limit: 10) == .added(Self.method("a", isDefault: true)))
        #expect(try await store.add(Self.method("b", at: 1), limit: 10) == .added(Self.method("b", at: 1)))
        #expect(try await store.defaultMethod(for: "c1")?.id == "a")
        #expect(
            try await store.add(Self.method("c", isDefault: true, at: 2), limit: 10)
                == .added(Self.method("c", isDefault: true, at: 2)))
        #expect(try await store.list(accountId: "c1").map(\.isDefault) == [false, false, true])
        #expect(try await store.setDefault(id: "b", accountId: "c1")?.isDefault == true)
        #expect(try await store.list(accountId: "c1").map(\.isDefault) == [false, true, false])
        #expect(try await store.setDefault(id: "b", accountId: "c2") == nil)
    }

    @Test(arguments: Kind.configured)
    func aTokenIsSavedOncePerAccountAndTheLimitHolds(_ kind: Kind) async throws {
        let (store, cleanup) = try Self.makeSUT(kind)
        defer { cleanup() }
        _ = try await store.add(Self.method("a", token: "pm_x"), limit: 2)
        #expect(
            try await store.add(Self.method("b", token: "pm_x"), limit: 2)
                == .existing(Self.method("a", token: "pm_x", isDefault: true)))
        #expect(
            try await store.add(Self.method("c", account: "c2", token: "pm_x"), limit: 2)
                == .added(Self.method("c", account: "c2", token: "pm_x", isDefault: true)))
        _ = try await store.add(Self.method("d"), limit: 2)
        #expect(try await store.add(Self.method("e"), limit: 2) == .full)
        #expect(try await store.list(accountId: "c1").map(\.id) == ["a", "d"])
    }

    @Test(arguments: Kind.configured)
    func removingTheDefaultPromotesTheNewestRemaining(_ kind: Kind) async throws {
        let (store, cleanup) = try Self.makeSUT(kind)
        defer { cleanup() }
        for (i, id) in ["a", "b", "c"].enumerated() {
            _ = try await store.add(Self.method(id, at: Double(i)), limit: 10)
        }
        _ = try await store.add(Self.method("other", account: "c2"), limit: 10)
        #expect(try await store.remove(id: "a", accountId: "c2") == false)
        #expect(try await store.remove(id: "a", accountId: "c1"))
        #expect(try await store.defaultMethod(for: "c1")?.id == "c")
        #expect(try await store.remove(id: "b", accountId: "c1"))
        #expect(try await store.defaultMethod(for: "c1")?.id == "c")
        #expect(try await store.remove(id: "c", accountId: "c1"))
        #expect(try await store.defaultMethod(for: "c1") == nil)
        #expect(try await store.defaultMethod(for: "c2")?.id == "other")
    }

    /// Concurrent adds of different tokens never pass the limit nor leave two defaults (or none).
    @Test(arguments: Kind.configured)
    func concurrentAddsKeepTheLimitAndOneDefault(_ kind: Kind) async throws {
        let (store, cleanup) = try Self.makeSUT(kind)
        defer { cleanup() }
        let outcomes = try await withThrowingTaskGroup(of: PaymentMethodAddition.self) { group in
            for i in 0..<30 {
                group.addTask { try await store.add(Self.method("m\(i)", isDefault: i % 3 == 0), limit: 10) }
            }
            return try await group.reduce(into: [PaymentMethodAddition]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .full }.count == 20)
        let saved = try await store.list(accountId: "c1")
        #expect(saved.count == 10 && saved.filter(\.isDefault).count == 1)
    }

    @Test func theSQLiteStoreKeepsMethodsAndTheDefaultAcrossAReopen() async throws {
        let database = try TemporaryDatabase("methods")
        defer { database.remove() }
        do {
            let store = try SQLitePaymentMethodStore(tripStore: SQLiteTripStore(path: database.path))
            _ = try await store.add(Self.method("a"), limit: 10)
            _ = try await store.add(Self.method("b", token: "pm_card_mastercard", at: 5), limit: 10)
            _ = try await store.setDefault(id: "b", accountId: "c1")
        }
        let reopened = try SQLitePaymentMethodStore(tripStore: SQLiteTripStore(path: database.path))
        #expect(reopened.schemaVersion == 1)
        #expect(
            try await reopened.list(accountId: "c1") == [
                Self.method("a"), Self.method("b", token: "pm_card_mastercard", isDefault: true, at: 5),
            ])
        #expect(try await reopened.defaultMethod(for: "c1")?.token == "pm_card_mastercard")
    }
}
