import Foundation
import RedisClient

/// The Redis server the live tests use: `ENROUTE_TEST_REDIS_URL` (`make test` starts one with scripts/redis.sh).
enum TestRedis {
    static let url = ProcessInfo.processInfo.environment["ENROUTE_TEST_REDIS_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let isOptional = ProcessInfo.processInfo.environment["ENROUTE_TEST_REDIS_OPTIONAL"] == "1"
    static let howToStart = """
        ENROUTE_TEST_REDIS_URL is not set, so the Redis tests did not run. Start a server and name it: \
        `export ENROUTE_TEST_REDIS_URL=$(scripts/redis.sh start .build/redis)` (make test does this), \
        or set ENROUTE_TEST_REDIS_OPTIONAL=1 to skip them.
        """

    /// The server's configuration, with short limits so a fault shows quickly.
    static func configuration(commandTimeout: Duration = .seconds(5)) throws -> RedisConfiguration {
        var configuration = try RedisConfiguration(url: url ?? "")
        configuration.commandTimeout = commandTimeout
        return configuration
    }

    /// A new connection to the server.
    static func connection() throws -> RedisConnection { RedisConnection(try configuration()) }

    /// Whether the connection named `name` is blocked in a command (`flags=b` in `CLIENT LIST`), asked over `redis`.
    static func isBlocked(_ name: String, asking redis: RedisConnection) async throws -> Bool {
        let clients = try await redis.send(["CLIENT", "LIST"]).string ?? ""
        return clients.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.contains("name=\(name)") && fields.contains { $0.hasPrefix("flags=") && $0.contains("b") }
        }
    }

    /// A name for a connection, unique to the test (client names take no spaces or colons).
    static func clientName(_ test: String = #function) -> String {
        "enroute-test-\(test.prefix { $0 != "(" })-\(UInt64.random(in: 0...UInt64.max))"
    }

    /// A key prefix of one test's own, so tests running at once never share keys.
    static func namespace(_ test: String = #function) -> String {
        "enroute-test:\(test.prefix { $0 != "(" }):\(UInt64.random(in: 0...UInt64.max)):"
    }
}
