public import Foundation
public import EnRouteModels

/// An idempotency key in use for one request: its scope, its body's fingerprint, and how to render
/// the answer to remember, so that the answer is stored in the same transaction as the change.
public struct IdempotencyContext: Sendable {
    public let scope: IdempotencyScope
    public let fingerprint: String
    public let render: @Sendable (Result<TripRecord, TripError>) -> StoredResponse

    public init(
        scope: IdempotencyScope, fingerprint: String,
        render: @escaping @Sendable (Result<TripRecord, TripError>) -> StoredResponse
    ) {
        self.scope = scope; self.fingerprint = fingerprint; self.render = render
    }
}

/// What to do with a request that carries an idempotency key.
public enum IdempotencyClaim: Sendable, Equatable {
    /// First sight of the key: go ahead.
    case proceed
    /// Already answered: send this again, unchanged.
    case replay(StoredResponse)
    /// The first request with this key is still running.
    case inFlight
    /// The key was used with a different body.
    case mismatch
}

extension TripCommits {
    /// An in-flight key older than this is taken to belong to a request that died.
    public static let idempotencyLockTimeout: TimeInterval = 60
    /// Keys are kept this long.
    public static let idempotencyRetention: TimeInterval = 24 * 3600

    /// Claims `context`'s key, or says how to answer without running the request.
    func claim(_ context: IdempotencyContext) async throws -> IdempotencyClaim {
        let at = now(), lock = Self.idempotencyLockTimeout, retention = Self.idempotencyRetention
        return try await transaction { tx in
            if let existing = try await tx.idempotency(context.scope),
                existing.createdAt > at.addingTimeInterval(-retention)
            {
                if existing.fingerprint != context.fingerprint { return .mismatch }
                if let response = existing.response { return .replay(response) }
                if existing.createdAt > at.addingTimeInterval(-lock) { return .inFlight }
            }
            try await tx.save(
                IdempotencyRecord(scope: context.scope, fingerprint: context.fingerprint, response: nil, createdAt: at))
            return .proceed
        }
    }

    /// Forgets a claimed key whose request failed before changing anything, so a retry runs again.
    func release(_ context: IdempotencyContext) async {
        _ = try? await transaction { tx in try await tx.deleteIdempotency(context.scope) }
    }
}
