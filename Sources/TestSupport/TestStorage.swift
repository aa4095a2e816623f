public import EnRouteBackend
public import EnRouteDomain
import EnRouteSQLite
public import EnRoutePostgres
import Foundation
import EnRouteNotifications

/// The storage a test's backend really runs on. With `ENROUTE_TEST_STORE=postgres` (and the server in
/// `ENROUTE_TEST_POSTGRES_URL`) the whole suite runs on PostgreSQL: `.memory` becomes a fresh schema and
/// `.sqlite(path:)` a schema named after the path, so a test that reopens a path reopens the same data.
public enum TestStorage {
    /// Whether this run maps every test backend onto PostgreSQL.
    public static var isPostgres: Bool {
        switch ProcessInfo.processInfo.environment["ENROUTE_TEST_STORE"] ?? "" {
        case "", "sqlite": return false
        case "postgres": return true
        case let other: fatalError("ENROUTE_TEST_STORE must be sqlite or postgres, not '\(other)'")
        }
    }

    /// A test backend's pool: a thousand tests share one server's `max_connections`, and a backend a test still holds
    /// keeps its idle connections, so each keeps few (the cap on connections leased at once stays the server's).
    public static let poolLimits = PostgresPoolLimits(capacity: 16, idle: 2, spare: 1)

    /// The server's URL; a run that asks for PostgreSQL without one stops with the reason.
    public static var postgresURL: String {
        guard let url = ProcessInfo.processInfo.environment["ENROUTE_TEST_POSTGRES_URL"], !url.isEmpty else {
            fatalError(
                "ENROUTE_TEST_STORE=postgres needs ENROUTE_TEST_POSTGRES_URL: start a server with `scripts/postgres.sh "
                    + "start .build/pg` and export the URL it prints"
            )
        }
        return url
    }

    /// `storage` as this run keeps it.
    public static func resolve(_ storage: BackendConfiguration.Storage) -> BackendConfiguration.Storage {
        guard isPostgres else { return storage }
        switch storage {
        case .memory: return .postgres(url: postgresURL, schema: SchemaPreparer.shared.take())
        case .sqlite(let path): return .postgres(url: postgresURL, schema: schema(forPath: path))
        case .postgres: return storage
        }
    }

    /// A schema name that is the same for the same path (FNV-1a of the path's bytes).
    public static func schema(forPath path: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "f_" + String(hash, radix: 16)
    }

    /// The trip store a backend on `.sqlite(path:)` opens in this run: the SQLite file, or its PostgreSQL schema.
    public static func tripStore(path: String) throws -> any TripStore {
        guard isPostgres else { return try SQLiteTripStore(path: path) }
        return try PostgresTripStore(url: postgresURL, schema: schema(forPath: path), poolLimits: poolLimits)
    }
}

/// Empty schemas with every store's migrations applied, made ahead on a thread of its own: a fresh schema's DDL takes a
/// tenth of a second, which `Backend.init` (synchronous, often on the cooperative pool) would otherwise spend there,
/// starving the live-socket tests. A test takes a ready one, or makes its own when none is ready.
final class SchemaPreparer: @unchecked Sendable {
    static let shared = SchemaPreparer()
    private let condition = NSCondition()
    private var ready: [String] = []
    private var started = false
    private let depth = 24

    /// A new schema name, migrated already when one was ready.
    func take() -> String {
        condition.lock()
        defer { condition.unlock() }
        if !started {
            started = true
            Thread { self.run() }.start()
        }
        condition.signal()
        return ready.popLast() ?? Self.name()
    }

    private static func name() -> String {
        "m_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(24)
    }

    private func run() {
        let url = TestStorage.postgresURL
        while true {
            condition.lock()
            while ready.count >= depth { condition.wait() }
            condition.unlock()
            let schema = Self.name()
            let clock = ManualClock()
            let effects = BackendEffects(
                clock: clock, now: { clock.date }, tripIDs: SequentialIDGenerator(prefix: "T"),
                offerIDs: SequentialIDGenerator(prefix: "O"), nearbyJitterSeed: 0,
                push: LogPushGateway(log: .discard), log: .discard)
            // Building the backend migrates every store it opens; it is released at once, closing its connections.
            guard
                (try? Backend(
                    BackendConfiguration(storage: .postgres(url: url, schema: schema), secret: TestBackend.secret),
                    effects: effects)) != nil
            else { return }
            condition.lock()
            ready.append(schema)
            condition.unlock()
        }
    }
}
