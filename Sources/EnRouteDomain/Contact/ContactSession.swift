public import Foundation
import Synchronization

/// One relay session of a trip: who it connects and the proxy number each dials. Stored, so a restart reuses it and
/// still closes it on time.
public struct ContactSession: Codable, Sendable, Equatable {
    /// The relay's id for the session.
    public let relaySessionId: String
    public let tripId: String
    public let customerId: String
    public let providerId: String
    /// The number the customer dials (E.164).
    public let customerDials: String
    /// The number the provider dials (E.164).
    public let providerDials: String
    public let openedAt: Date
    /// When it will be closed: set once the trip has ended.
    public var closesAt: Date?
    /// When it was closed; nil while open.
    public var closedAt: Date?

    public init(
        relaySessionId: String, tripId: String, customerId: String, providerId: String, customerDials: String,
        providerDials: String,
        openedAt: Date, closesAt: Date? = nil, closedAt: Date? = nil
    ) {
        self.relaySessionId = relaySessionId; self.tripId = tripId; self.customerId = customerId;
        self.providerId = providerId
        self.customerDials = customerDials; self.providerDials = providerDials; self.openedAt = openedAt
        self.closesAt = closesAt; self.closedAt = closedAt
    }
}

/// Where contact sessions are kept.
public protocol ContactSessionStore: Sendable {
    /// The trip's open session, nil when none.
    func openSession(tripId: String) async throws -> ContactSession?
    /// Every session not yet closed.
    func openSessions() async throws -> [ContactSession]
    /// Creates or replaces the session with `session.relaySessionId`.
    func save(_ session: ContactSession) async throws
}

/// Contact sessions in memory, for tests and the in-memory backend.
public final class InMemoryContactSessionStore: ContactSessionStore {
    private let sessions = Mutex<[String: ContactSession]>([:])
    public init() {}

    public func openSession(tripId: String) async throws -> ContactSession? {
        sessions.withLock {
            $0.values.filter { $0.tripId == tripId && $0.closedAt == nil }.max { $0.openedAt < $1.openedAt }
        }
    }

    public func openSessions() async throws -> [ContactSession] {
        sessions.withLock { $0.values.filter { $0.closedAt == nil }.sorted { $0.relaySessionId < $1.relaySessionId } }
    }

    public func save(_ session: ContactSession) async throws {
        sessions.withLock { $0[session.relaySessionId] = session }
    }

    /// Every session ever saved, open or closed.
    public var all: [ContactSession] {
        sessions.withLock { $0.values.sorted { $0.relaySessionId < $1.relaySessionId } }
    }
}
