import Testing
import RedisClient
import TestSupport

/// Connection faults without a Redis server: a refused port, a server that never answers.
@Suite struct RedisConnectionFailureTests {
    @Test func aRefusedConnectionIsAnErrorNamingTheAddress() async throws {
        let closed = try LoopbackPort(listening: false)
        let connection = RedisConnection(RedisConfiguration(host: "127.0.0.1", port: closed.port))
        await #expect {
            _ = try await connection.ping()
        } throws: { error in
            guard case RedisClientError.connectionFailed(let host, let port, let reason) = error else { return false }
            return host == "127.0.0.1" && port == closed.port && reason.contains("refused")
                && "\(error)".hasPrefix("cannot connect to Redis at 127.0.0.1:\(closed.port)")
        }
    }

    /// The kernel takes the connection into the backlog, so the command is written and no reply ever comes.
    @Test func aServerThatNeverAnswersTimesOutTheCommand() async throws {
        let silent = try LoopbackPort(listening: true)
        let connection = RedisConnection(
            RedisConfiguration(host: "127.0.0.1", port: silent.port, commandTimeout: .milliseconds(200)))
        await #expect {
            _ = try await connection.send(["PING"])
        } throws: { error in
            guard case RedisClientError.timedOut(_, let port, let after) = error else { return false }
            return port == silent.port && after == .milliseconds(200)
        }
    }

    /// Six commands sent at once to a server that takes them and never answers: the first is written and times
    /// out; the five queued behind it have used up their time by then and fail unsent, instead of each opening a
    /// new connection and waiting its own full limit in turn (six limits in all).
    @Test func commandsQueuedBehindAStalledOneFailWhenTheirTimeIsUpWithoutBeingSent() async throws {
        let silent = try LoopbackPort(listening: true)
        let limit = Duration.seconds(3)
        let connection = RedisConnection(
            RedisConfiguration(host: "127.0.0.1", port: silent.port, commandTimeout: limit))
        let started = ContinuousClock.now
        let timedOut = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<6 {
                group.addTask {
                    do { _ = try await connection.send(["ECHO", "\(i)"]) } catch RedisClientError.timedOut(
                        _, _, let after)
                    { return after == limit } catch {}
                    return false
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(timedOut == 6)
        #expect(started.duration(to: .now) < limit * 3, "the queued commands waited their limits in turn")
        var connections = 0
        while silent.acceptOne() { connections += 1 }
        #expect(connections == 1, "a queued command opened a connection of its own")
        let sent = String(decoding: silent.acceptedBytes(), as: UTF8.self)
        #expect(sent.components(separatedBy: "ECHO").count - 1 == 1, "sent: \(sent.debugDescription)")
    }

    @Test func aCancelledCommandStopsWaitingAtOnce() async throws {
        let silent = try LoopbackPort(listening: true)
        let connection = RedisConnection(
            RedisConfiguration(host: "127.0.0.1", port: silent.port, commandTimeout: .seconds(60)))
        let started = ContinuousClock.now
        let command = Task { try await connection.send(["PING"]) }
        // Whether the cancellation lands before or during the wait, the command must end with CancellationError.
        command.cancel()
        await #expect(throws: CancellationError.self) { _ = try await command.value }
        #expect(
            started.duration(to: .now) < .seconds(30), "the command waited for its timeout instead of its cancellation")
    }

    @Test func aCommandCancelledWhileItWaitsForItsReplyEndsAtOnce() async throws {
        let silent = try LoopbackPort(listening: true)
        let connection = RedisConnection(
            RedisConfiguration(host: "127.0.0.1", port: silent.port, commandTimeout: .seconds(60)))
        let started = ContinuousClock.now
        let command = Task { try await connection.send(["PING"]) }
        try await eventually("the connection is made", within: .seconds(10)) { silent.acceptOne() }
        try await eventually("the command is sent", within: .seconds(10)) { silent.acceptedHasSent() }
        command.cancel()
        await #expect(throws: CancellationError.self) { _ = try await command.value }
        #expect(
            started.duration(to: .now) < .seconds(30), "the command waited for its timeout instead of its cancellation")
    }
}
