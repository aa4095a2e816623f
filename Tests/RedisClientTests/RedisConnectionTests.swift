import Testing
import RedisClient
import TestSupport

/// The client against a real Redis (`ENROUTE_TEST_REDIS_URL`).
@Suite(.enabled(if: TestRedis.url != nil, "needs ENROUTE_TEST_REDIS_URL"))
struct RedisConnectionTests {
    @Test func aValueSetWithALifetimeIsReadBackAndThenExpires() async throws {
        let redis = try TestRedis.connection()
        let key = TestRedis.namespace() + "fix"
        try await redis.set(key, Array("60.17,24.94".utf8), expiresAfter: .seconds(3))
        #expect(try await redis.get(key) == Array("60.17,24.94".utf8))
        guard case .integer(let left) = try await redis.send(["PTTL", key]) else {
            Issue.record("PTTL is not an integer"); return
        }
        // Under the whole suite's load a second may pass between the SET and the PTTL: the bound is the lifetime given.
        #expect((1...3_000).contains(left))
        try await eventually("the key expires", within: .seconds(10)) { try await redis.get(key) == nil }
    }

    @Test func aValueWithoutALifetimeStaysAndDeleteCountsWhatExisted() async throws {
        let redis = try TestRedis.connection()
        let prefix = TestRedis.namespace()
        try await redis.set(prefix + "a", [0, 1, 2, 13, 10])
        #expect(try await redis.send(["PTTL", prefix + "a"]) == .integer(-1))
        #expect(try await redis.get(prefix + "a") == [0, 1, 2, 13, 10])
        #expect(try await redis.get(prefix + "missing") == nil)
        #expect(try await redis.delete([prefix + "a", prefix + "missing"]) == 1)
        #expect(try await redis.get(prefix + "a") == nil)
        #expect(try await redis.expire(prefix + "a", after: .seconds(1)) == false)
    }

    @Test func anErrorReplyIsATypedErrorAndTheConnectionGoesOn() async throws {
        let redis = try TestRedis.connection()
        let key = TestRedis.namespace() + "text"
        try await redis.set(key, Array("abc".utf8))
        await #expect(throws: RedisServerError.self) { try await redis.send(["INCR", key]) }
        do {
            _ = try await redis.send(["LPUSH", key, "x"])
            Issue.record("LPUSH on a string was accepted")
        } catch let error as RedisServerError {
            #expect(error.code == "WRONGTYPE")
        }
        #expect(try await redis.ping())
    }

    @Test func aPipelineAnswersInOrderWithAnErrorInItsPlace() async throws {
        let redis = try TestRedis.connection()
        let key = TestRedis.namespace() + "n"
        let replies = try await redis.pipeline([
            ["SET", key, "1"], ["INCR", key], ["HGET", key, "f"], ["INCRBY", key, "10"], ["GET", key],
        ])
        #expect(replies.count == 5)
        #expect(replies[0] == .simple("OK"))
        #expect(replies[1] == .integer(2))
        guard case .error(let message) = replies[2] else { Issue.record("HGET on a string gave \(replies[2])"); return }
        #expect(message.hasPrefix("WRONGTYPE"))
        #expect(replies[3] == .integer(12))
        #expect(replies[4] == .bulk(Array("12".utf8)))
    }

    @Test func aPipelineOfManyCommandsReadsEveryReply() async throws {
        let redis = try TestRedis.connection()
        let key = TestRedis.namespace() + "count"
        let replies = try await redis.pipeline(Array(repeating: ["INCR", key], count: 5_000))
        #expect(replies == (1...5_000).map { RESPValue.integer($0) })
    }

    @Test func geoSearchFindsTheNearestMembersFirstWithTheirDistances() async throws {
        let redis = try TestRedis.connection()
        let key = TestRedis.namespace() + "geo"
        // Central Helsinki: the railway station, Kamppi (~600 m west), Kallio (~2 km north-east), Espoo (~15 km).
        let added = try await redis.geoAdd(
            key,
            [
                ("station", 24.9414, 60.1719), ("kamppi", 24.9320, 60.1690),
                ("kallio", 24.9497, 60.1841), ("espoo", 24.6559, 60.2055),
            ])
        #expect(added == 4)
        let near = try await redis.geoSearch(key, longitude: 24.9384, latitude: 60.1699, radiusMeters: 3_000, count: 10)
        #expect(near.map(\.member) == ["station", "kamppi", "kallio"])
        #expect(near.map(\.distanceMeters) == near.map(\.distanceMeters).sorted())
        #expect(near[0].distanceMeters > 150 && near[0].distanceMeters < 350)
        let nearest = try await redis.geoSearch(
            key, longitude: 24.9384, latitude: 60.1699, radiusMeters: 50_000, count: 2)
        #expect(nearest.map(\.member) == ["station", "kamppi"])
        #expect(
            try await redis.geoSearch(
                TestRedis.namespace() + "empty", longitude: 24.9, latitude: 60.1, radiusMeters: 1_000, count: 5
            ).isEmpty)
        // Moving a member replaces its position (a provider's newer fix).
        #expect(try await redis.geoAdd(key, [("espoo", 24.9385, 60.1700)]) == 0)
        #expect(
            try await redis.geoSearch(key, longitude: 24.9384, latitude: 60.1699, radiusMeters: 3_000, count: 1).map(
                \.member) == ["espoo"])
    }

    /// The outbox relay's guarantee: an id is added once; retrying it (or an older one) is "already published".
    @Test func anExplicitStreamIDIsAddedOnceAndItsRetryIsAlreadyPublished() async throws {
        let redis = try TestRedis.connection()
        let stream = TestRedis.namespace() + "city"
        let fields = [RedisStreamEntry.Field("trip", Array("t1".utf8)), .init("version", Array("3".utf8))]
        #expect(
            try await redis.xAdd(stream, id: RedisStreamID(outboxSequence: 5), fields: fields)
                == .added(RedisStreamID(outboxSequence: 5)))
        #expect(try await redis.xAdd(stream, id: RedisStreamID(outboxSequence: 5), fields: fields) == .alreadyPublished)
        #expect(try await redis.xAdd(stream, id: RedisStreamID(outboxSequence: 4), fields: fields) == .alreadyPublished)
        #expect(
            try await redis.xAdd(
                stream, id: RedisStreamID(outboxSequence: 6), fields: [.init("trip", Array("t2".utf8))],
                approximateMaxLength: 1_000) == .added(RedisStreamID(outboxSequence: 6)))
        #expect(try await redis.lastStreamID(stream) == RedisStreamID(outboxSequence: 6))
        #expect(try await redis.lastStreamID(stream + "-none") == .zero)

        let all = try await redis.xRead([(stream, .zero)])
        #expect(all.map(\.entry.id) == [RedisStreamID(outboxSequence: 5), RedisStreamID(outboxSequence: 6)])
        #expect(all.allSatisfy { $0.stream == stream })
        #expect(all[0].entry.fields == fields)
        #expect(all[0].entry["version"] == Array("3".utf8))
        #expect(
            try await redis.xRead([(stream, RedisStreamID(outboxSequence: 5))], count: 10).map(\.entry.id) == [
                RedisStreamID(outboxSequence: 6)
            ])
        #expect(try await redis.xRead([(stream, RedisStreamID(outboxSequence: 6))], block: .milliseconds(10)).isEmpty)
    }

    @Test func aStreamReaderHandsOutEntriesAddedWhileItWaitsInOrder() async throws {
        let writer = try TestRedis.connection()
        let prefix = TestRedis.namespace()
        let (north, south) = (prefix + "north", prefix + "south")
        var named = try TestRedis.configuration()
        named.clientName = TestRedis.clientName()
        let reader = RedisStreamReader(named, streams: [(north, .zero), (south, .zero)], block: .seconds(2), batch: 2)
        let received = Task {
            var messages: [RedisStreamMessage] = []
            for try await message in reader {
                messages.append(message)
                if messages.count == 5 { break }
            }
            return messages
        }
        // Wait until the reader is blocked in XREAD on both streams, so the entries reach it through BLOCK.
        try await eventually("the reader waits in XREAD", within: .seconds(10)) {
            try await TestRedis.isBlocked(named.clientName!, asking: writer)
        }
        for sequence in UInt64(1)...3 {
            _ = try await writer.xAdd(
                north, id: RedisStreamID(outboxSequence: sequence), fields: [.init("n", Array(String(sequence).utf8))])
        }
        for sequence in UInt64(1)...2 {
            _ = try await writer.xAdd(
                south, id: RedisStreamID(outboxSequence: sequence), fields: [.init("s", Array(String(sequence).utf8))])
        }
        let messages = try await received.value
        #expect(messages.count == 5)
        let northIDs = messages.filter { $0.stream == north }.map(\.entry.id.milliseconds)
        let southIDs = messages.filter { $0.stream == south }.map(\.entry.id.milliseconds)
        #expect(northIDs == [1, 2, 3])
        #expect(southIDs == [1, 2])
    }

    @Test func cancellingAStreamReaderEndsItWhileItBlocks() async throws {
        let watcher = try TestRedis.connection()
        let stream = TestRedis.namespace() + "quiet"
        var named = try TestRedis.configuration()
        named.clientName = TestRedis.clientName()
        let reader = RedisStreamReader(named, streams: [(stream, .zero)], block: .seconds(60))
        let started = ContinuousClock.now
        let consumer = Task {
            var count = 0
            for try await _ in reader { count += 1 }
            return count
        }
        try await eventually("the reader waits in XREAD", within: .seconds(10)) {
            try await TestRedis.isBlocked(named.clientName!, asking: watcher)
        }
        consumer.cancel()
        #expect(try await consumer.value == 0)
        #expect(
            started.duration(to: .now) < .seconds(30),
            "the reader waited out its BLOCK instead of ending on cancellation")
    }

    /// The command in flight when the connection drops throws; the next one opens a new connection and works.
    @Test func aCommandInFlightWhenTheConnectionDropsThrowsAndTheNextReconnects() async throws {
        var named = try TestRedis.configuration()
        named.clientName = TestRedis.clientName()
        let victim = RedisConnection(named)
        let killer = try TestRedis.connection()
        let key = TestRedis.namespace() + "list"
        guard case .integer(let victimID) = try await victim.send(["CLIENT", "ID"]) else {
            Issue.record("CLIENT ID"); return
        }
        let blocked = Task { try await victim.send(["BLPOP", key, "30"], blockingFor: .seconds(30)) }
        try await eventually("BLPOP is waiting", within: .seconds(10)) {
            try await TestRedis.isBlocked(named.clientName!, asking: killer)
        }
        #expect(try await killer.send(["CLIENT", "KILL", "ID", String(victimID)]) == .integer(1))
        await #expect {
            _ = try await blocked.value
        } throws: { error in
            guard case RedisClientError.connectionClosed = error else { return false }
            return true
        }
        #expect(try await victim.ping())
        guard case .integer(let newID) = try await victim.send(["CLIENT", "ID"]) else {
            Issue.record("CLIENT ID"); return
        }
        #expect(newID != victimID)
    }

    @Test func anIdleConnectionTheServerClosedIsReopenedBeforeTheNextCommand() async throws {
        let idle = try TestRedis.connection()
        let killer = try TestRedis.connection()
        guard case .integer(let idleID) = try await idle.send(["CLIENT", "ID"]) else {
            Issue.record("CLIENT ID"); return
        }
        #expect(try await killer.send(["CLIENT", "KILL", "ID", String(idleID)]) == .integer(1))
        try await eventually("the server has closed it", within: .seconds(10)) {
            !(try await killer.send(["CLIENT", "LIST"]).string ?? "").contains("id=\(idleID) ")
        }
        #expect(try await idle.ping())
    }

    @Test func theURLsDatabaseIsSelectedOnEveryConnection() async throws {
        var configuration = try TestRedis.configuration()
        configuration.database = 3
        configuration.clientName = "enroute-test-db3"
        let inThree = RedisConnection(configuration)
        configuration.database = 0
        let inZero = RedisConnection(configuration)
        let key = TestRedis.namespace() + "db"
        try await inThree.set(key, [1], expiresAfter: .seconds(30))
        #expect(try await inThree.get(key) == [1])
        #expect(try await inZero.get(key) == nil)
        #expect(try await inThree.send(["CLIENT", "GETNAME"]) == .bulk(Array("enroute-test-db3".utf8)))
        await inThree.close()
        #expect(try await inThree.get(key) == [1])
        try await inThree.delete([key])
    }

    @Test func evalRunsAScriptOverItsKeysAndArguments() async throws {
        let redis = try TestRedis.connection()
        let key = TestRedis.namespace() + "counter"
        let script = "return redis.call('INCRBY', KEYS[1], ARGV[1])"
        #expect(try await redis.eval(script, keys: [key], arguments: [Array("7".utf8)]) == .integer(7))
        #expect(try await redis.eval(script, keys: [key], arguments: [Array("5".utf8)]) == .integer(12))
    }
}

/// Without a server the live tests are off; this says so, and how to start one, unless they are optional.
@Suite struct RedisServerForTests {
    @Test func theTestRedisIsConfigured() async throws {
        guard let url = TestRedis.url else {
            if !TestRedis.isOptional { Issue.record(Comment(rawValue: TestRedis.howToStart)) }
            return
        }
        let redis = try RedisConnection(url: url)
        #expect(try await redis.ping(), "the server at \(url) does not answer PING")
    }
}
