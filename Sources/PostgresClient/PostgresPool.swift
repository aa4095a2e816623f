import Foundation
import Synchronization

/// A small pool of connections to one database (and search path), opened on demand.
///
/// Async leases (transactions) are capped at `capacity`; a caller past the cap suspends, holding no thread, until a
/// connection comes back. A blocking caller (a synchronous read, possibly from inside a transaction's body) never
/// waits for the cap: with nothing idle it takes a spare connection outside the cap, or opens one, so a body holding a
/// lease cannot deadlock on its own read. Up to `Limits.idle` counted connections and `Limits.spare` spares stay open
/// idle: PostgreSQL forks a backend per connection, and a pool that closes what it will need again in a millisecond
/// spends the database's CPU on starting sessions. Async callers run the blocking libpq calls on the connection's own
/// serial queue, never on Swift's cooperative pool. A connection that lost its
/// server is dropped when returned, with the idle ones (likely gone with it), so the next use opens a new one; the
/// failed call's error reaches its caller.
public final class PostgresPool: Sendable {
    /// The database's URL.
    public let url: String
    /// The schema search path every connection sets, if any.
    public let searchPath: String?
    private let capacity: Int
    private let idleLimit: Int
    private let spareLimit: Int
    private let state: Mutex<State>

    private enum Grant: Sendable {
        /// An idle connection to use.
        case connection(PostgresConnection)
        /// A free slot: open a connection in it.
        case slot
    }

    private struct State {
        var idle: [PostgresConnection] = []
        /// Idle connections outside the cap, kept for blocking callers that find every counted one leased.
        var spare: [PostgresConnection] = []
        /// Connections opened since the pool began (the first included).
        var opened = 1
        /// Connections counted against `capacity` (idle and leased, extra ones excluded).
        var open = 0
        var waiters: [CheckedContinuation<Grant, any Error>] = []
        var closed = false
    }

    /// How many connections a pool opens and keeps.
    public struct Limits: Sendable, Equatable {
        /// Connections leased at once (async callers past it wait).
        public var capacity: Int
        /// Of those, how many stay open between uses.
        public var idle: Int
        /// Connections outside the cap kept open for blocking reads that find every counted one leased.
        public var spare: Int

        /// The defaults: 16 leased at once, all kept idle, 8 spares.
        public init(capacity: Int = 16, idle: Int? = nil, spare: Int = 8) {
            self.capacity = capacity; self.idle = idle ?? capacity; self.spare = spare
        }
    }

    /// A pool over `url` that opens one connection now, so a malformed URL or unreachable server fails here with a
    /// clear
    /// `PostgresError`.
    public init(url: String, searchPath: String? = nil, limits: Limits = Limits()) throws {
        self.url = url
        self.searchPath = searchPath
        self.capacity = max(1, limits.capacity)
        self.idleLimit = max(1, min(limits.idle, capacity))
        self.spareLimit = max(0, limits.spare)
        let first = try PostgresConnection(url: url, searchPath: searchPath)
        state = Mutex(State(idle: [first], open: 1))
    }

    deinit { close() }

    /// Closes idle connections now and leased ones when they come back; later leases throw.
    public func close() {
        let (idle, waiters) = state.withLock { s in
            s.closed = true
            defer { s.idle = []; s.spare = []; s.waiters = [] }
            return (s.idle + s.spare, s.waiters)
        }
        idle.forEach { $0.close() }
        waiters.forEach { $0.resume(throwing: PostgresError.connectionFailure("the connection pool is closed")) }
    }

    /// Connections counted against the cap now (idle and leased).
    public var openConnections: Int { state.withLock { $0.open } }

    /// Connections opened since the pool began, spares included: what the pool cost the server in sessions.
    public var connectionsOpened: Int { state.withLock { $0.opened } }

    /// Spare connections (outside the cap) open and idle now.
    public var spareConnections: Int { state.withLock { $0.spare.count } }

    /// Runs `body` with a connection on the caller's thread, blocking it for the connection and the calls.
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let (connection, counted) = try acquireBlocking()
        defer { release(connection, counted: counted) }
        return try body(connection)
    }

    /// Runs `body` with a leased connection on that connection's queue and awaits it.
    public func withConnection<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        try await withLease { lease in try await lease.run(body) }
    }

    /// Runs `body` holding one connection across its awaits (a transaction over several calls), returning it
    /// afterwards.
    public func withLease<T>(_ body: (PostgresLease) async throws -> T) async throws -> T {
        let connection = try await acquire()
        defer { release(connection, counted: true) }
        return try await body(PostgresLease(connection: connection))
    }

    private func acquire() async throws -> PostgresConnection {
        let grant: Grant = try await withCheckedThrowingContinuation { continuation in
            let now: Result<Grant, any Error>? = state.withLock { s in
                guard !s.closed else {
                    return .failure(PostgresError.connectionFailure("the connection pool is closed"))
                }
                if let idle = s.idle.popLast() { return .success(.connection(idle)) }
                if s.open < capacity { s.open += 1; return .success(.slot) }
                s.waiters.append(continuation)
                return nil
            }
            if let now { continuation.resume(with: now) }
        }
        switch grant {
        case .connection(let connection): return connection
        case .slot:
            // Connecting blocks: do it on a queue, not on the cooperative pool.
            return try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(with: Result { try self.open() }) }
            }
        }
    }

    /// An idle connection (counted), or a new one outside the cap (not counted).
    private func acquireBlocking() throws -> (PostgresConnection, counted: Bool) {
        let taken: (PostgresConnection, counted: Bool)? = try state.withLock { s in
            guard !s.closed else { throw PostgresError.connectionFailure("the connection pool is closed") }
            if let idle = s.idle.popLast() { return (idle, true) }
            if let spare = s.spare.popLast() { return (spare, false) }
            s.opened += 1
            return nil
        }
        if let taken { return taken }
        return (try PostgresConnection(url: url, searchPath: searchPath), false)
    }

    /// Opens a connection in a slot already counted, freeing the slot if it fails.
    private func open() throws -> PostgresConnection {
        state.withLock { $0.opened += 1 }
        do { return try PostgresConnection(url: url, searchPath: searchPath) } catch {
            giveBack(.slot)
            throw error
        }
    }

    private func release(_ connection: PostgresConnection, counted: Bool) {
        if connection.isBroken {
            connection.close()
            // The server likely dropped the idle ones too (a restart, a terminated backend): reopen them on demand.
            let stale = state.withLock { s in
                defer { s.open -= s.idle.count; s.idle = []; s.spare = [] }
                return s.idle + s.spare
            }
            stale.forEach { $0.close() }
            if counted { giveBack(.slot) }
        } else if counted {
            giveBack(.connection(connection))
        } else {
            // A spare: counted again if the cap has room (and no waiter is owed the slot), else kept spare, else
            // closed.
            let kept = state.withLock { s -> Bool in
                guard !s.closed else { return false }
                if s.waiters.isEmpty, s.idle.count < idleLimit, s.open < capacity {
                    s.open += 1
                    s.idle.append(connection)
                    return true
                }
                guard s.spare.count < spareLimit else { return false }
                s.spare.append(connection)
                return true
            }
            if !kept { connection.close() }
        }
    }

    /// Hands a connection or a slot to the first waiter, or keeps it (idle up to the limit) or closes it.
    private func giveBack(_ grant: Grant) {
        let (waiter, closing): (CheckedContinuation<Grant, any Error>?, PostgresConnection?) = state.withLock { s in
            if !s.waiters.isEmpty, !s.closed { return (s.waiters.removeFirst(), nil) }
            switch grant {
            case .connection(let connection):
                if s.closed || s.idle.count >= idleLimit { s.open -= 1; return (nil, connection) }
                s.idle.append(connection)
            case .slot: s.open -= 1
            }
            return (nil, nil)
        }
        closing?.close()
        waiter?.resume(returning: grant)
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
