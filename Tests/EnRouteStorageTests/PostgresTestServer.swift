import Foundation
import Testing
import PostgresClient

/// The PostgreSQL server the repository suite runs against, named by `ENROUTE_TEST_POSTGRES_URL`
/// (`make test` starts one with `scripts/postgres.sh` and sets it).
enum PostgresTestServer {
    static var url: String? {
        ProcessInfo.processInfo.environment["ENROUTE_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A schema name no other test uses.
    static func freshSchema(_ prefix: String) -> String {
        let clean = prefix.lowercased().filter { $0.isLetter || $0.isNumber }
        return "t_\(clean.prefix(20))_"
            + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
    }

    /// Drops a test's schema with everything in it.
    static func drop(_ schema: String, url: String) {
        guard let connection = try? PostgresConnection(url: url) else { return }
        try? connection.execute("DROP SCHEMA IF EXISTS \(schema) CASCADE")
    }
}

@Suite struct PostgresConfigurationTests {
    /// The repository suite runs every store on PostgreSQL too; without a server it would quietly test SQLite alone.
    @Test func postgresIsConfiguredForTheRepositorySuite() {
        guard PostgresTestServer.url == nil,
            ProcessInfo.processInfo.environment["ENROUTE_TEST_POSTGRES_OPTIONAL"] != "1"
        else { return }
        Issue.record(
            """
            ENROUTE_TEST_POSTGRES_URL is not set, so the repository suite ran on SQLite only. Start a server with \
            `scripts/postgres.sh start .build/pg` and export the URL it prints (make test does both), or set \
            ENROUTE_TEST_POSTGRES_OPTIONAL=1 to run on SQLite alone.
            """)
    }
}
