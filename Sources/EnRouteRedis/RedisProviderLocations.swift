public import Foundation
public import EnRouteDomain
public import EnRouteModels
public import RedisClient

/// `ProviderLocations` in Redis, shared by every node, partitioned by city as `ProviderPresence` is:
///
/// - `<prefix>:fix:<provider>`: the latest fix, `lat,lng,recordedAt-ms`, `SET … PX` the time it has left to live;
/// - `<prefix>:online`: the set of online providers;
/// - `<prefix>:geo:<city>:<bucket>`: GEOADD of each fresh fix into the key of its city and of the time bucket it was
///   recorded in (`bucketSpan` wide), expiring `fixLifetime` after the bucket ends, so a provider who stops sending
///   ages out with the bucket and no sweep runs anywhere.
///
/// A search asks GEOSEARCH of every bucket of the centre's city that can hold a usable fix (pipelined), then reads
/// the candidates' fix keys: the fix key is the truth (the newest position, its time, so its city), the buckets only
/// find candidates, and a stale copy where a provider used to be is dropped. Freshness is judged on the injected
/// clock, as in memory; Redis's own expiry only collects the garbage. One Redis (not a Cluster: a search reads fix
/// keys of many providers at once).
public final class RedisProviderLocations: ProviderLocations {
    public let fixLifetime: TimeInterval
    /// The cities the positions are partitioned by.
    public let cities: Cities
    /// The width of one geo bucket, in seconds.
    public let bucketSpan: TimeInterval
    private let redis: RedisConnection
    private let prefix: String
    private let now: @Sendable () -> Date

    /// Provider locations in the Redis behind `redis`, under keys starting `prefix:presence`.
    public init(
        redis: RedisConnection, cities: Cities = .everywhere, prefix: String = "enroute",
        fixLifetime: TimeInterval = 120,
        bucketSpan: TimeInterval = 30, now: @escaping @Sendable () -> Date
    ) {
        self.redis = redis
        self.cities = cities
        self.prefix = "\(prefix):presence"
        self.fixLifetime = fixLifetime
        self.bucketSpan = bucketSpan
        self.now = now
    }

    @discardableResult
    public func setOnline(_ provider: String, _ online: Bool, position: Coordinate?) async throws -> Bool {
        let at = now()
        let before = try await state(of: provider, at: at)
        var fix = before.fix
        if let position, (fix?.recordedAt ?? .distantPast) <= at {
            fix = Fix(coordinate: position, recordedAt: at)
            try await store(fix!, of: provider, at: at)
        }
        guard online else {
            var commands: [RedisCommand] = [["SREM", onlineKey, provider]]
            for city in cities.names { commands += liveBuckets(at: at).map { ["ZREM", geoKey(city, $0), provider] } }
            try await Self.check(redis.pipeline(commands))
            return false
        }
        try await redis.send(["SADD", onlineKey, provider])
        guard let fix, isUsable(fix, at: at), try await index(fix, of: provider, at: at) else { return false }
        return !before.findable
    }

    @discardableResult
    public func update(_ provider: String, to coordinate: Coordinate, recordedAt: Date) async throws -> Bool {
        let at = now()
        let before = try await state(of: provider, at: at)
        let fix = Fix(coordinate: coordinate, recordedAt: recordedAt)
        try await store(fix, of: provider, at: at)
        guard before.online, isUsable(fix, at: at), try await index(fix, of: provider, at: at) else { return false }
        return !before.findable
    }

    public func position(of provider: String) async throws -> ProviderPresence.Position? {
        let at = now()
        guard let fix = try await redis.get(fixKey(provider)).flatMap(Fix.init), isUsable(fix, at: at) else {
            return nil
        }
        return ProviderPresence.Position(coordinate: fix.coordinate, recordedAt: fix.recordedAt)
    }

    public func isOnline(_ provider: String) async throws -> Bool {
        try await redis.send(["SISMEMBER", onlineKey, provider]) == .integer(1)
    }

    public func onlineProviders() async throws -> [(id: String, position: ProviderPresence.Position?)] {
        let reply = try await redis.send(["SMEMBERS", onlineKey])
        guard case .array(let members) = reply else {
            throw RedisClientError.unexpectedReply(command: "SMEMBERS", expected: "a set", got: reply)
        }
        let ids = members.compactMap(\.string).sorted()
        guard !ids.isEmpty else { return [] }
        let fixes = try await redis.send(RedisCommand(strings: ["MGET"] + ids.map(fixKey)))
        guard case .array(let values) = fixes, values.count == ids.count else {
            throw RedisClientError.unexpectedReply(command: "MGET", expected: "\(ids.count) values", got: fixes)
        }
        let at = now()
        return zip(ids, values).map { id, value in
            let fix = value.bytes.flatMap(Fix.init).flatMap { isUsable($0, at: at) ? $0 : nil }
            return (id, fix.map { ProviderPresence.Position(coordinate: $0.coordinate, recordedAt: $0.recordedAt) })
        }
    }

    public func nearest(
        to center: Coordinate, limit: Int, within radius: Double, where include: (String) -> Bool
    ) async throws -> [GeoHit<String>] {
        guard limit > 0, let city = cities.city(containing: center) else { return [] }
        let at = now()
        // Ask each bucket for more than `limit`: some hits are stale copies of a provider who moved, or excluded.
        var ask = max(limit * 4, 32)
        while true {
            let buckets = liveBuckets(at: at)
            let replies = try await redis.pipeline(
                buckets.map {
                    RedisCommand(strings: [
                        "GEOSEARCH", geoKey(city, $0), "FROMLONLAT", String(center.lng), String(center.lat),
                        "BYRADIUS", String(radius), "m", "ASC", "COUNT", String(ask),
                    ])
                })
            var candidates: [String] = []
            var seen = Set<String>()
            var anyBucketFull = false
            for reply in replies {
                if case .error(let message) = reply { throw RedisServerError(message: message) }
                guard case .array(let members) = reply else { continue }
                anyBucketFull = anyBucketFull || members.count == ask
                for member in members.compactMap(\.string) where seen.insert(member).inserted && include(member) {
                    candidates.append(member)
                }
            }
            let hits = try await usableHits(candidates, in: city, center: center, radius: radius, at: at)
            // A full bucket may hide nearer members past its COUNT once stale and excluded ones are dropped.
            if hits.count >= limit || !anyBucketFull { return Array(hits.prefix(limit)) }
            ask *= 4
        }
    }

    // MARK: - Keys and fixes

    private struct Fix {
        let coordinate: Coordinate
        let recordedAt: Date

        init(coordinate: Coordinate, recordedAt: Date) {
            self.coordinate = coordinate
            self.recordedAt = recordedAt
        }

        init?(_ bytes: [UInt8]) {
            let parts = String(decoding: bytes, as: UTF8.self).split(separator: ",")
            guard parts.count == 3, let lat = Double(parts[0]), let lng = Double(parts[1]), let ms = Int64(parts[2])
            else { return nil }
            self.init(
                coordinate: Coordinate(lat: lat, lng: lng), recordedAt: Date(timeIntervalSince1970: Double(ms) / 1000))
        }

        var encoded: [UInt8] {
            Array(
                "\(coordinate.lat),\(coordinate.lng),\(Int64((recordedAt.timeIntervalSince1970 * 1000).rounded()))".utf8
            )
        }
    }

    private var onlineKey: String { "\(prefix):online" }
    private func fixKey(_ provider: String) -> String { "\(prefix):fix:\(provider)" }
    private func geoKey(_ city: String, _ bucket: Int64) -> String { "\(prefix):geo:\(city):\(bucket)" }
    private func bucket(of date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / bucketSpan).rounded(.down)) }

    /// The buckets that can hold a fix still usable at `at`, newest first.
    private func liveBuckets(at: Date) -> [Int64] {
        Array((bucket(of: at.addingTimeInterval(-fixLifetime))...bucket(of: at)).reversed())
    }

    private func isUsable(_ fix: Fix, at: Date) -> Bool { fix.recordedAt > at.addingTimeInterval(-fixLifetime) }

    /// Whether the provider is online and whether they were findable (online with a usable fix in a city), with the
    /// fix.
    private func state(of provider: String, at: Date) async throws -> (online: Bool, findable: Bool, fix: Fix?) {
        let replies = try await Self.check(
            redis.pipeline([["GET", fixKey(provider)], ["SISMEMBER", onlineKey, provider]]))
        let fix = replies[0].bytes.flatMap(Fix.init)
        let online = replies[1] == .integer(1)
        let findable =
            online && fix.map { isUsable($0, at: at) && cities.city(containing: $0.coordinate) != nil } == true
        return (online, findable, fix)
    }

    /// Stores the fix as the provider's latest, to vanish once unusable (kept at least a second, so it is readable).
    private func store(_ fix: Fix, of provider: String, at: Date) async throws {
        let left = max(1, fix.recordedAt.addingTimeInterval(fixLifetime).timeIntervalSince(at))
        try await redis.set(
            fixKey(provider), fix.encoded, expiresAfter: .milliseconds(Int64((left * 1000).rounded(.up))))
    }

    /// Adds the fix to its city's key for its time bucket, which lives until no fix in it can be usable; false (and
    /// nothing added) when no city holds it.
    private func index(_ fix: Fix, of provider: String, at: Date) async throws -> Bool {
        guard let city = cities.city(containing: fix.coordinate) else { return false }
        let bucket = bucket(of: fix.recordedAt)
        let end = Date(timeIntervalSince1970: Double(bucket + 1) * bucketSpan)
        let left = max(1, end.addingTimeInterval(fixLifetime).timeIntervalSince(at))
        try await Self.check(
            redis.pipeline([
                RedisCommand(strings: [
                    "GEOADD", geoKey(city, bucket), String(fix.coordinate.lng), String(fix.coordinate.lat), provider,
                ]),
                RedisCommand(strings: ["PEXPIRE", geoKey(city, bucket), String(Int64((left * 1000).rounded(.up)))]),
            ]))
        return true
    }

    /// The candidates' latest fixes, kept when usable, online, in `city` and within `radius`, nearest first.
    private func usableHits(
        _ candidates: [String], in city: String, center: Coordinate, radius: Double, at: Date
    ) async throws -> [GeoHit<String>] {
        guard !candidates.isEmpty else { return [] }
        let replies = try await Self.check(
            redis.pipeline(
                [RedisCommand(strings: ["MGET"] + candidates.map(fixKey))]
                    + candidates.map { ["SISMEMBER", onlineKey, $0] }))
        guard case .array(let fixes) = replies[0], fixes.count == candidates.count else {
            throw RedisClientError.unexpectedReply(
                command: "MGET", expected: "\(candidates.count) values", got: replies[0])
        }
        var hits: [GeoHit<String>] = []
        for (index, provider) in candidates.enumerated() where replies[index + 1] == .integer(1) {
            guard let fix = fixes[index].bytes.flatMap(Fix.init), isUsable(fix, at: at),
                cities.city(containing: fix.coordinate) == city
            else { continue }
            let distance = StraightLineEstimator.distance(center, fix.coordinate)
            guard distance <= radius else { continue }
            hits.append(
                GeoHit(id: provider, coordinate: fix.coordinate, recordedAt: fix.recordedAt, distance: distance))
        }
        return hits.sorted { ($0.distance, $0.id) < ($1.distance, $1.id) }
    }

    /// The replies, or the first error reply among them as a `RedisServerError`.
    @discardableResult
    private static func check(_ replies: [RESPValue]) throws -> [RESPValue] {
        for reply in replies { if case .error(let message) = reply { throw RedisServerError(message: message) } }
        return replies
    }
}
