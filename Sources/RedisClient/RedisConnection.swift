import Dispatch
import Synchronization
import Glibc

/// One connection to a Redis server, opened on first use and again on the first command after it dropped.
///
/// Commands run one at a time, in the order they were sent, on the connection's own serial queue: the blocking
/// socket work never holds a thread of Swift's cooperative pool. A command's time limit counts from its call, time
/// queued behind others included: when the server stalls, the commands waiting behind the stalled one fail when
/// their own time is up, unsent, instead of each waiting its full limit in turn. A command whose connection fails
/// (closed, reset,
/// timed out) throws and drops the connection; it is never sent again by itself, since Redis may have run it. The
/// next command opens a new connection. A command whose task is cancelled while it waits throws
/// `CancellationError` and drops the connection too (its reply would otherwise answer the next command).
public final class RedisConnection: @unchecked Sendable {
    // Safety: `socket` and `parser` are touched only on `queue`; each command's `Ticket` is behind a Mutex.

    /// Where the connection goes and its time limits.
    public let configuration: RedisConfiguration
    private let queue: DispatchQueue
    private var socket: RedisSocket?
    private var parser = RESPParser()

    /// One command's cancellation state: once it runs, the descriptor it waits on, so that cancelling its task
    /// can wake it (`shutdown`, under the lock, so the descriptor is never one already closed and reused).
    private final class Ticket: Sendable {
        struct State {
            var cancelled = false
            var descriptor: Int32?
        }
        let state = Mutex(State())
    }

    /// A connection to the server `configuration` names; nothing is opened until the first command.
    public init(_ configuration: RedisConfiguration) {
        self.configuration = configuration
        queue = DispatchQueue(label: "RedisClient.connection.\(configuration.host):\(configuration.port)")
    }

    /// A connection to `url` (`redis://host[:port][/db]`); throws on a malformed URL.
    public convenience init(url: String) throws(RedisClientError) {
        self.init(try RedisConfiguration(url: url))
    }

    /// Sends `command` and answers its reply; an error reply throws `RedisServerError`.
    @discardableResult
    public func send(_ command: RedisCommand) async throws -> RESPValue {
        let reply = try await pipeline([command])[0]
        if case .error(let message) = reply { throw RedisServerError(message: message) }
        return reply
    }

    /// Sends `command` asking the server to block up to `serverBlock` (XREAD BLOCK, BLPOP): the reply may take
    /// that long beyond the command timeout.
    @discardableResult
    public func send(_ command: RedisCommand, blockingFor serverBlock: Duration) async throws -> RESPValue {
        let reply = try await roundTrip([command], extraTime: serverBlock)[0]
        if case .error(let message) = reply { throw RedisServerError(message: message) }
        return reply
    }

    /// Writes every command at once and then reads their replies in order; error replies stay in place as
    /// `.error` values (one refused command does not void the others). The whole pipeline shares one timeout.
    public func pipeline(_ commands: [RedisCommand]) async throws -> [RESPValue] {
        try await roundTrip(commands, extraTime: .zero)
    }

    /// Closes the connection now (the next command opens a new one).
    public func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.drop()
                continuation.resume()
            }
        }
    }

    private func roundTrip(_ commands: [RedisCommand], extraTime: Duration) async throws -> [RESPValue] {
        guard !commands.isEmpty else { return [] }
        let ticket = Ticket()
        let timeout = configuration.commandTimeout + extraTime
        let deadline = ContinuousClock.now.advanced(by: timeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[RESPValue], any Error>) in
                queue.async {
                    continuation.resume(
                        with: Result { try self.exchange(commands, until: deadline, timeout: timeout, ticket: ticket) })
                }
            }
        } onCancel: {
            ticket.state.withLock { ticket in
                ticket.cancelled = true
                if let descriptor = ticket.descriptor { _ = shutdown(descriptor, Int32(SHUT_RDWR)) }
            }
        }
    }

    /// Runs on `queue`: connects if needed, writes, reads the replies, all before `deadline` (`timeout` after the
    /// call).
    private func exchange(
        _ commands: [RedisCommand], until deadline: ContinuousClock.Instant, timeout: Duration, ticket: Ticket
    ) throws -> [RESPValue] {
        if ticket.state.withLock({ $0.cancelled }) { throw CancellationError() }
        // Its time ran out while it queued behind others: nothing was sent, and the connection stays as it is.
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else {
            throw RedisClientError.timedOut(host: configuration.host, port: configuration.port, after: timeout)
        }
        let socket = try connected(within: min(left, configuration.connectTimeout))
        let startedCancelled = ticket.state.withLock { ticket in
            if !ticket.cancelled { ticket.descriptor = socket.descriptor }
            return ticket.cancelled
        }
        if startedCancelled { throw CancellationError() }  // nothing was sent: the connection stays good
        var bytes: [UInt8] = []
        for command in commands { command.encode(into: &bytes) }
        do {
            try socket.write(bytes, until: deadline, timeout: timeout)
            var replies: [RESPValue] = []
            replies.reserveCapacity(commands.count)
            while replies.count < commands.count {
                if let reply = try parser.next() {
                    replies.append(reply)
                } else {
                    try socket.read(into: &parser, until: deadline, timeout: timeout)
                }
            }
            ticket.state.withLock { $0.descriptor = nil }
            return replies
        } catch {
            let cancelled = ticket.state.withLock { ticket in
                ticket.descriptor = nil
                return ticket.cancelled
            }
            drop()
            if cancelled { throw CancellationError() }
            throw error
        }
    }

    /// Runs on `queue`: the open connection, or a new one (made within `connectTimeout`) if there is none or the
    /// server closed it while idle.
    private func connected(within connectTimeout: Duration) throws -> RedisSocket {
        if let socket, !socket.isClosedByPeer { return socket }
        drop()
        let fresh = try RedisSocket.connect(host: configuration.host, port: configuration.port, timeout: connectTimeout)
        var setup: [RedisCommand] = []
        if configuration.database != 0 { setup.append(["SELECT", String(configuration.database)]) }
        if let name = configuration.clientName { setup.append(["CLIENT", "SETNAME", name]) }
        if !setup.isEmpty {
            let deadline = ContinuousClock.now.advanced(by: configuration.commandTimeout)
            var bytes: [UInt8] = []
            for command in setup { command.encode(into: &bytes) }
            try fresh.write(bytes, until: deadline, timeout: configuration.commandTimeout)
            var replies: [RESPValue] = []
            do {
                while replies.count < setup.count {
                    if let reply = try parser.next() {
                        replies.append(reply)
                    } else {
                        try fresh.read(into: &parser, until: deadline, timeout: configuration.commandTimeout)
                    }
                }
            } catch {
                parser.reset()
                throw error
            }
            if let refused = replies.first(where: { if case .error = $0 { true } else { false } }),
                case .error(let message) = refused
            {
                parser.reset()
                throw RedisServerError(message: message)
            }
        }
        socket = fresh
        return fresh
    }

    /// Runs on `queue`: forgets the connection and anything half-read from it.
    private func drop() {
        socket = nil
        parser.reset()
    }
}
