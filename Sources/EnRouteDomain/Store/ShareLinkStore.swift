import Synchronization

/// The share links' revocations: a generation per trip that every link names. Revoking a trip's links bumps it, so
/// every link minted before stops working while the link itself stays a stateless signed token.
public protocol ShareLinkStore: Sendable {
    /// The trip's current generation (0 before its links were ever revoked).
    func generation(tripId: String) throws -> Int
    /// Revokes every link of the trip minted so far; returns the new generation.
    func revoke(tripId: String) async throws -> Int
}

/// The share links' revocations in memory (tests, `--db` absent).
public final class InMemoryShareLinkStore: ShareLinkStore {
    private let generations = Mutex<[String: Int]>([:])

    public init() {}

    public func generation(tripId: String) throws -> Int { generations.withLock { $0[tripId] ?? 0 } }

    public func revoke(tripId: String) async throws -> Int {
        generations.withLock { g in
            g[tripId, default: 0] += 1; return g[tripId]!
        }
    }
}
