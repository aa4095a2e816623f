import Testing
import RedisClient
import TestSupport

/// The client and the stream reader through `TCPFaultProxy` in front of the test Redis: a cut link, a partition.
@Suite(.enabled(if: TestRedis.url != nil, "needs ENROUTE_TEST_REDIS_URL"))
struct RedisThroughFaultProxyTests {
    private func makeSUT(
        commandTimeout: Duration = .seconds(5)
    ) throws -> (proxy: TCPFaultProxy, redis: RedisConnection, direct: RedisConnection) {
        let server = try TestRedis.configuration()
        let proxy = try TCPFaultProxy(
            forwardingTo: server.port, host: server.host == "localhost" ? "127.0.0.1" : server.host)
        var throughProxy = server
        throughProxy.host = "127.0.0.1"
        throughProxy.port = Int(proxy.port)
        throughProxy.commandTimeout = commandTimeout
        return (proxy, RedisConnection(throughProxy), RedisConnection(server))
    }

    @Test func aClientFailsWhileTheLinkIsCutAndWorksAfterItIsRestored() async throws {
        let (proxy, redis, direct) = try makeSUT()
        let key = TestRedis.namespace() + "k"
        try await redis.set(key, Array("before".utf8))
        #expect(proxy.openConnections == 1)

        try await proxy.cut()
        #expect(proxy.openConnections == 0)
        // The dropped connection is noticed before the next command, whose reconnect is refused.
        for _ in 0..<2 {
            await #expect {
                try await redis.set(key, Array("during".utf8))
            } throws: { error in
                guard case RedisClientError.connectionFailed(_, _, let reason) = error else { return false }
                return reason.contains("refused")
            }
        }
        #expect(try await direct.get(key) == Array("before".utf8), "a write was applied while the link was cut")

        try await proxy.restore()
        try await redis.set(key, Array("after".utf8))
        #expect(try await redis.get(key) == Array("after".utf8))
        #expect(proxy.mode == .forwarding)
        try await proxy.stop()
    }

    /// A blackholed link answers nothing: the command times out (and is not resent), and after the restore a new
    /// connection works.
    @Test func aCommandIntoABlackholeTimesOutAndTheClientRecoversAfterTheRestore() async throws {
        let (proxy, redis, direct) = try makeSUT(commandTimeout: .milliseconds(300))
        let key = TestRedis.namespace() + "n"
        #expect(try await redis.send(["INCR", key]) == .integer(1))

        try await proxy.blackhole()
        await #expect {
            _ = try await redis.send(["INCR", key])
        } throws: { error in
            guard case RedisClientError.timedOut = error else { return false }
            return true
        }
        #expect(try await direct.get(key) == Array("1".utf8), "the blackhole forwarded the command")

        try await proxy.restore()
        // The held INCR flows on once the link heals (a partition's late delivery), so the count is 2 or 3 after this
        // one, never more: the client itself never resent the timed-out command.
        guard case .integer(let count) = try await redis.send(["INCR", key]) else {
            Issue.record("INCR is not an integer"); return
        }
        #expect(count == 2 || count == 3)
        try await eventually("the held INCR arrives", within: .seconds(10)) {
            try await direct.get(key) == Array("3".utf8)
        }
        try await proxy.stop()
    }

    /// A reader cut off mid-BLOCK throws; a new one started after the last id it handed out gets what was added
    /// meanwhile, so the partition loses nothing.
    @Test func aStreamReaderCutOffResumesAfterItsLastEntryWithNothingLost() async throws {
        let (proxy, _, direct) = try makeSUT()
        let stream = TestRedis.namespace() + "city"
        var throughProxy = try TestRedis.configuration()
        throughProxy.host = "127.0.0.1"
        throughProxy.port = Int(proxy.port)
        throughProxy.clientName = TestRedis.clientName()
        for sequence in UInt64(1)...2 {
            _ = try await direct.xAdd(
                stream, id: RedisStreamID(outboxSequence: sequence),
                fields: [.init("seq", Array(String(sequence).utf8))])
        }
        let firstReader = RedisStreamReader(throughProxy, streams: [(stream, .zero)], block: .seconds(30))
        let first = Task {
            var seen: [UInt64] = []
            do {
                for try await message in firstReader { seen.append(message.entry.id.milliseconds) }
                return (seen, nil as (any Error)?)
            } catch {
                return (seen, error)
            }
        }
        // Both entries are in the stream, so the reader blocks only once it has read them.
        try await eventually("the reader waits in XREAD after two entries", within: .seconds(10)) {
            try await TestRedis.isBlocked(throughProxy.clientName!, asking: direct)
        }
        try await proxy.cut()
        for sequence in UInt64(3)...4 {
            _ = try await direct.xAdd(
                stream, id: RedisStreamID(outboxSequence: sequence),
                fields: [.init("seq", Array(String(sequence).utf8))])
        }
        let (seen, failure) = await first.value
        #expect(seen == [1, 2])
        #expect(failure is RedisClientError, "the cut reader ended with \(String(describing: failure))")

        try await proxy.restore()
        let resumed = RedisStreamReader(
            throughProxy, streams: [(stream, RedisStreamID(outboxSequence: seen.last!))], block: .seconds(5))
        var after: [UInt64] = []
        for try await message in resumed {
            after.append(message.entry.id.milliseconds)
            if after.count == 2 { break }
        }
        #expect(after == [3, 4])
        try await proxy.stop()
    }
}
