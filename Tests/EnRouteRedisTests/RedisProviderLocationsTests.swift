import Foundation
import Testing
import EnRouteDomain
import EnRouteModels
import EnRouteRedis
import RedisClient

/// What only the Redis implementation has to show: its keys age out by themselves.
@Suite(.enabled(if: TestRedisServer.url != nil, "needs ENROUTE_TEST_REDIS_URL"))
struct RedisProviderLocationsTests {
    /// Stale providers leave Redis with no sweep: every fix key and geo bucket expires; only the online set stays.
    @Test func everyKeyButTheOnlineSetExpiresByItself() async throws {
        let redis = RedisConnection(try RedisConfiguration(url: TestRedisServer.url ?? ""))
        let prefix = "enroute-test-\(UInt64.random(in: 0...UInt64.max))"
        let at = Date(timeIntervalSince1970: 1_800_000_015)
        let sut = RedisProviderLocations(redis: redis, prefix: prefix, fixLifetime: 120, bucketSpan: 30, now: { at })
        try await sut.setOnline("p1", true, position: Coordinate(lat: 60.17, lng: 24.94))
        try await sut.update("p2", to: Coordinate(lat: 60.18, lng: 24.95), recordedAt: at.addingTimeInterval(-100))
        try await sut.setOnline("p2", true, position: nil)

        guard case .array(let names) = try await redis.send(["KEYS", "\(prefix):presence:*"]) else {
            Issue.record("KEYS"); return
        }
        let keys = names.compactMap(\.string).sorted()
        #expect(
            keys
                == ["fix:p1", "fix:p2", "geo:default:60000000", "geo:default:59999997", "online"].map {
                    "\(prefix):presence:\($0)"
                }.sorted())
        var lifetimes: [String: Int] = [:]
        for key in keys {
            guard case .integer(let left) = try await redis.send(["PTTL", key]) else {
                Issue.record("PTTL \(key)"); return
            }
            lifetimes[String(key.dropFirst("\(prefix):presence:".count))] = left
        }
        #expect(lifetimes["online"] == -1)
        // p1's fix was taken now: 120 s to live; p2's 100 s ago: 20 s. Each bucket lives 120 s past its end
        // (p1's ends 15 s from now, p2's ended 75 s ago).
        // Redis counts down in real time while the suite runs: each window allows 15 s of it, still far from the
        // others.
        #expect((105_000...120_000).contains(lifetimes["fix:p1"] ?? 0))
        #expect((5_000...20_000).contains(lifetimes["fix:p2"] ?? 0))
        #expect((120_000...135_000).contains(lifetimes["geo:default:60000000"] ?? 0))
        #expect((30_000...45_000).contains(lifetimes["geo:default:59999997"] ?? 0))
        try await redis.delete(keys)
    }
}
