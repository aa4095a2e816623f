import Foundation
import Synchronization

/// A small pool of connections to one database (and search path), opened on demand up to `capacity`.
///
/// Each use leases one connection; async callers run its blocking calls on the connection's own serial queue,
/// never on Swift's cooperative pool. A connection that lost its server is dropped when returned, so the next
/// use opens a new one; the failed call's error reaches its caller. Idle connections close with the pool.
public final class PostgresPool: Sendable {
    /// The database's URL.
    public let url: String
    /// The schema search path every connection sets, if any.
    public let searchPath: String?
    private let capacity: Int
    private let waitLimit: DispatchTimeInterval
    private let state: Mutex<State>

    private enum Grant: Sendable {
        /// An idle connection to use.
        case connection(PostgresConnection)
        /// A free slot: open a connection in it.
        case slot
    }

    private struct State {
        var idle: [PostgresConnection] = []
        var open = 0
        var waiters: [@Sendable (Grant) -> Void] = []
        var closed = false
    }

    /// A pool over `url` that opens one connection now, so a malformed URL or unreachable server fails here with a clear
    /// `PostgresError`. A caller that finds every connection leased waits up to `waitLimit` for one.
    public init(url: String, searchPath: String? = nil, capacity: Int = 32, waitLimit: Duration = .seconds(30)) throws {
        self.url = url
        self.searchPath = searchPath
        self.capacity = max(1, capacity)
        let (seconds, attoseconds) = waitLimit.components
        self.waitLimit = .milliseconds(Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
        let first = try PostgresConnection(url: url, searchPath: searchPath)
        state = Mutex(State(idle: [first], open: 1))
    }

    deinit { close() }

    /// Closes idle connections now and leased ones when they come back; later leases throw.
    public func close() {
        let idle = state.withLock { s in
            s.closed = true
            defer { s.idle = [] }
            return s.idle
        }
        idle.forEach { $0.close() }
    }

    /// Connections open now (idle and leased).
    public var openConnections: Int { state.withLock { $0.open } }

    /// Runs `body` with a leased connection on the caller's thread, blocking it for the connection and the calls.
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try acquireBlocking()
        defer { release(connection) }
        return try body(connection)
    }

    /// Runs `body` with a leased connection on that connection's queue and awaits it.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await withLease { lease in try await lease.run(body) }
    }

    /// Runs `body` holding one connection across its awaits (a transaction over several calls), returning it afterwards.
    public func withLease<T>(_ body: (PostgresLease) async throws -> T) async throws -> T {
        let connection = try await acquire()
        defer { release(connection) }
        return try await body(PostgresLease(connection: connection))
    }

    private func acquire() async throws -> PostgresConnection {
        let grant: Grant = try await withCheckedThrowingContinuation { continuation in
            do {
                if let grant = try take(orWait: { continuation.resume(returning: $0) }) { continuation.resume(returning: grant) }
            } catch { continuation.resume(throwing: error) }
        }
        switch grant {
        case .connection(let connection): return connection
        case .slot:
            // Connecting blocks: do it on a queue of its own, not on the cooperative pool.
            return try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(with: Result { try self.open() }) }
            }
        }
    }

    private func acquireBlocking() throws -> PostgresConnection {
        let handoff = Handoff()
        let grant = try take(orWait: { grant in
            if !handoff.deliver(grant) { self.giveBack(grant) }
        })
        switch grant ?? handoff.wait(waitLimit) {
        case .connection(let connection): return connection
        case .slot: return try open()
        case nil:
            throw PostgresError(sqlState: "53300", message: "no PostgreSQL connection came free within the wait limit (all \(capacity) are leased)")
        }
    }

    /// A grant now, or nil after queueing `waiter` for the next one.
    private func take(orWait waiter: @escaping @Sendable (Grant) -> Void) throws -> Grant? {
        try state.withLock { s in
            guard !s.closed else { throw PostgresError.connectionFailure("the connection pool is closed") }
            if let idle = s.idle.popLast() { return .connection(idle) }
            if s.open < capacity { s.open += 1; return .slot }
            s.waiters.append(waiter)
            return nil
        }
    }

    /// Opens a connection in a slot already counted, freeing the slot if it fails.
    private func open() throws -> PostgresConnection {
        do { return try PostgresConnection(url: url, searchPath: searchPath) } catch {
            giveBack(.slot)
            throw error
        }
    }

    private func release(_ connection: PostgresConnection) {
        if connection.isBroken {
            connection.close()
            giveBack(.slot)
        } else {
            giveBack(.connection(connection))
        }
    }

    /// Hands a connection or a slot to the first waiter, or keeps it (an idle connection, or one fewer open).
    private func giveBack(_ grant: Grant) {
        let (waiter, closing): ((@Sendable (Grant) -> Void)?, PostgresConnection?) = state.withLock { s in
            if !s.waiters.isEmpty, !s.closed { return (s.waiters.removeFirst(), nil) }
            switch grant {
            case .connection(let connection):
                if s.closed { s.open -= 1; return (nil, connection) }
                s.idle.append(connection)
            case .slot: s.open -= 1
            }
            return (nil, nil)
        }
        closing?.close()
        waiter?(grant)
    }
}

/// One connection held across a transaction's awaits; each call runs on the connection's queue.
public struct PostgresLease: Sendable {
    let connection: PostgresConnection

    /// Runs `work` on the leased connection's serial queue and awaits it.
    public func run<T: Sendable>(_ work: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let connection = self.connection
        return try await withCheckedThrowingContinuation { continuation in
            connection.queue.async { continuation.resume(with: Result { try work(connection) }) }
        }
    }
}

extension PostgresPool {
    /// A blocking waiter's mailbox: the grant if it came in time; a late grant is refused (and given back by the pool).
    private final class Handoff: @unchecked Sendable {
        private let lock = NSLock()
        private let ready = DispatchSemaphore(value: 0)
        private var grant: Grant?
        private var abandoned = false

        func deliver(_ grant: Grant) -> Bool {
            lock.withLock {
                guard !abandoned else { return false }
                self.grant = grant
                ready.signal()
                return true
            }
        }

        func wait(_ limit: DispatchTimeInterval) -> Grant? {
            _ = ready.wait(timeout: .now() + limit)
            return lock.withLock {
                if grant == nil { abandoned = true }
                return grant
            }
        }
    }
}
