public import Foundation
public import EnRouteModels
import Synchronization

/// Sees every trip change inside the change's own transaction, to record side effects atomically
/// (for example, push notifications into the outbox).
public protocol TripChangeObserver: Sendable {
    /// Called after `new` is written; `old` is nil for a new trip. Throwing rolls the change back. A transaction
    /// run again after a conflict calls it again: only the writes of the run that commits are kept.
    func tripChanged(from old: TripRecord?, to new: TripRecord, in transaction: any TripTransaction) async throws
}

/// How every trip change is written and told: one store transaction, run again when it lost to a concurrent one, and
/// after it commits the new version is kept in the cache, published to watchers and handed to the commit listeners.
///
/// Transactions may run concurrently (see `TripStore`): one that loses to a concurrent change of the same trip or key
/// (`TripStoreConflict`) is run again from its first read, up to `conflictRetries` times, and then the caller gets
/// `TripError.contended`.
public final class TripCommits: Sendable {
    public let store: any TripStore
    public let cache: TripCache
    public let hub: TripEventHub
    let estimator: any TripEstimator
    let observers: [any TripChangeObserver]
    /// This node's id when it is one of several sharing a store (`FanOut`); nil on a node of its own.
    public let node: String?
    let now: @Sendable () -> Date
    /// How many times a transaction that lost to a concurrent one runs again before `TripError.contended`.
    public let conflictRetries: Int
    private let retried = Atomic<Int>(0)
    private let liveSequence = Atomic<UInt64>(0)
    /// In registration order; `everywhere` ones also hear other nodes' versions (`onChange`).
    private let listeners = Mutex<
        [(everywhere: Bool, call: @Sendable (_ old: TripRecord?, _ new: TripRecord) -> Void)]
    >([])

    init(
        store: any TripStore, cache: TripCache, hub: TripEventHub, estimator: any TripEstimator,
        observers: [any TripChangeObserver], node: String?, conflictRetries: Int, now: @escaping @Sendable () -> Date
    ) {
        self.store = store; self.cache = cache; self.hub = hub; self.estimator = estimator
        self.observers = observers; self.node = node; self.now = now
        self.conflictRetries = max(0, conflictRetries)
    }

    /// How many transactions have been run again after a conflict, since start.
    public var conflictsRetried: Int { retried.load(ordering: .relaxed) }

    /// Runs `body` as one store transaction, again from the start when it lost to a concurrent one.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (any TripTransaction) async throws -> T) async throws -> T
    {
        var retries = 0
        // On a node of several, every trip written is also queued for the other nodes, in the same transaction.
        let shared: @Sendable (any TripTransaction) async throws -> T
        if let node {
            let now = self.now
            let sequence: @Sendable () -> UInt64 = { [weak self] in
                self?.liveSequence.wrappingAdd(1, ordering: .relaxed).newValue ?? 0
            }
            shared = { tx in try await body(SharingTransaction(tx, node: node, now: now, sequence: sequence)) }
        } else {
            shared = body
        }
        while true {
            do {
                return try await store.transaction(shared)
            } catch is TripStoreConflict {
                guard retries < conflictRetries else { throw TripError.contended }
                retries += 1
                retried.add(1, ordering: .relaxed)
            }
        }
    }

    /// Calls `listener` after every committed creation (`old` nil) or change, in commit order per trip.
    /// It runs on the committing task and must not block (dispatch and provider streams hand work off).
    func onCommit(_ listener: @escaping @Sendable (_ old: TripRecord?, _ new: TripRecord) -> Void) {
        listeners.withLock { $0.append((false, listener)) }
    }

    /// Calls `listener` after every change this node learns of: its own commits (as `onCommit`) and the versions other
    /// nodes committed (`absorbed`).
    func onChange(_ listener: @escaping @Sendable (_ old: TripRecord?, _ new: TripRecord) -> Void) {
        listeners.withLock { $0.append((true, listener)) }
    }

    /// Keeps a committed version, publishes it and tells the commit listeners; `changed` is false for a replayed change
    /// id, which commits nothing new.
    func commit(_ trip: TripRecord, previous: TripRecord?, changed: Bool = true) {
        // Concurrent commits of one trip can get here out of order: a watcher never sees a version go back.
        if cache.remember(trip) { hub.publish([trip]) }
        guard changed else { return }
        estimator.tripCommitted(from: previous, to: trip, at: now())
        for listener in listeners.withLock({ $0 }) { listener.call(previous, trip) }
    }

    /// Tells the change listeners (not the commit listeners) of a version another node committed.
    func absorbed(_ trip: TripRecord, previous: TripRecord?) {
        for listener in listeners.withLock({ $0 }) where listener.everywhere { listener.call(previous, trip) }
    }

    // MARK: - Idempotency keys

    /// Stores the answer to remember under the request's key, in the transaction that made the change.
    static func finish(
        _ tx: any TripTransaction, _ context: IdempotencyContext?, _ result: Result<TripRecord, TripError>, at: Date
    ) async throws {
        guard let context else { return }
        try await tx.save(
            IdempotencyRecord(
                scope: context.scope, fingerprint: context.fingerprint, response: context.render(result), createdAt: at)
        )
    }

    /// Answers `error` under the request's key as the creating transaction would, without changing anything else.
    func answer(_ error: TripError, idempotency: IdempotencyContext?) async throws -> TripRecord {
        let at = now()
        if let idempotency {
            try await transaction { tx in try await Self.finish(tx, idempotency, .failure(error), at: at) }
        }
        throw error
    }

    // MARK: - Changes outside the trip machine

    /// One change a party makes outside the trip machine (a tip, a rating, a basket change), in one transaction:
    /// `decide` refuses it or returns the edited trip (and may queue work in the transaction); the new version is
    /// logged as `account`'s change, the answer stored under the request's key, and the trip published.
    func recordChange(
        _ tripId: String, by account: Account, idempotency: IdempotencyContext?, kind: TripKind? = nil,
        _ decide: @escaping @Sendable (TripRecord, any TripTransaction) async throws -> Result<TripRecord, TripError>
    ) async throws -> TripRecord {
        let at = now()
        let result: (Result<TripRecord, TripError>, TripRecord)? = try await transaction { tx in
            guard let trip = try await tx.trip(tripId), trip.isVisible(to: account), kind == nil || trip.kind == kind
            else { return nil }
            var outcome = try await decide(trip, tx)
            if case .success(var next) = outcome {
                next.version = trip.version + 1
                next.updatedAt = at
                try await tx.update(next, expectedVersion: trip.version)
                try await tx.append(
                    ChangeLogEntry(
                        tripId: tripId, version: next.version, status: next.status.name, actorRole: account.role,
                        actorId: account.id, serverTime: at))
                outcome = .success(next)
            }
            try await Self.finish(tx, idempotency, outcome, at: at)
            return (outcome, trip)
        }
        guard let (outcome, old) = result else { throw TripError.notFound }
        let changed = try outcome.get()
        commit(changed, previous: old)
        return changed
    }

    /// Keeps a record changed without a new version (a token, a matched path, a drifted ETA) in memory.
    func rewrite(_ tripId: String, _ edit: @escaping @Sendable (inout TripRecord) -> Bool) async throws -> TripRecord? {
        let updated: TripRecord? = try await transaction { tx in
            guard var trip = try await tx.trip(tripId), edit(&trip) else { return nil }
            try await tx.update(trip, expectedVersion: trip.version)
            return trip
        }
        if let updated { cache.remember(updated) }
        return updated
    }
}
