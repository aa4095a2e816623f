public import Foundation
public import EnRouteModels
import Synchronization

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

/// Sees every trip change inside the change's own transaction, to record side effects atomically
/// (for example, push notifications into the outbox).
public protocol TripChangeObserver: Sendable {
    /// Called after `new` is written; `old` is nil for a new trip. Throwing rolls the change back. A transaction
    /// run again after a conflict calls it again: only the writes of the run that commits are kept.
    func tripChanged(from old: TripRecord?, to new: TripRecord, in transaction: any TripTransaction) async throws
}

/// The trip service: owns every trip as a versioned state machine.
///
/// Every move is one transaction: load, check, apply, bump, log, remember the key. Reads are served
/// from memory; changes are published to watchers after they commit.
///
/// Transactions may run concurrently (see `TripStore`): one that loses to a concurrent change of the same
/// trip or key (`TripStoreConflict`) is run again from its first read, up to `conflictRetries` times, and then
/// the caller gets `TripError.contended`.
public final class TripService: Sendable {
    /// A trip in memory behind one reference: a read takes that reference instead of copying every field.
    private final class Held: Sendable {
        let record: TripRecord
        init(_ record: TripRecord) { self.record = record }
    }

    /// The cached trips by id; reads and writes see plain records, `held` hands out the reference.
    private struct Shelf {
        private var boxes: [String: Held] = [:]
        subscript(id: String) -> TripRecord? {
            get { boxes[id]?.record }
            set { boxes[id] = newValue.map(Held.init) }
        }
        func held(_ id: String) -> Held? { boxes[id] }
        var count: Int { boxes.count }
        func filter(_ isIncluded: (TripRecord) -> Bool) -> [TripRecord] {
            boxes.values.compactMap { isIncluded($0.record) ? $0.record : nil }
        }
    }

    private struct Cache {
        var trips = Shelf()
        var activeByCustomer: [String: Set<String>] = [:]
        var activeByProvider: [String: Set<String>] = [:]
        /// Rides waiting for a provider (the demand side of the busy-time multiplier).
        var searching: Set<String> = []
        /// Per active cached trip, the ETA the store holds and when the trip was last written (fixes move
        /// the cached ETA without writing).
        var stored: [String: (eta: Date?, at: Date)] = [:]
        /// Ended trips still in `trips`, oldest first: a short memory for the reads that follow an end,
        /// bounded by `endedCacheLimit`; older ones are read from the store.
        var ended: [String] = []
        var endedHead = 0
    }

    /// The cities trips are partitioned by: a trip belongs to the one holding its pickup.
    public let cities: Cities
    public let store: any TripStore
    public let hub: TripEventHub
    public let directory: any PartyDirectory
    public let estimator: any TripEstimator
    /// Quotes, holds and charges; nil for a service that takes no money (domain tests that exercise only the trip
    /// machine).
    public let payments: TripPayments?
    let now: @Sendable () -> Date
    private let ids: any IDGenerator
    private let cache = Mutex(Cache())
    /// Every provider's rating totals, loaded at `warm()` and kept as customers rate.
    private let ratingTotals = Mutex<[String: RatingTotal]>([:])
    private let observers: [any TripChangeObserver]
    /// In registration order; `everywhere` ones also hear other nodes' versions (`onChange`).
    private let commitListeners = Mutex<
        [(everywhere: Bool, call: @Sendable (_ old: TripRecord?, _ new: TripRecord) -> Void)]
    >([])
    private let fixListeners = Mutex<[@Sendable (_ trip: TripRecord, _ fixes: [LocationFix]) -> Void]>([])
    /// This node's id when it is one of several sharing a store (`FanOut`); nil on a node of its own.
    public let node: String?
    private let liveSequence = Atomic<UInt64>(0)
    /// An in-flight key older than this is taken to belong to a request that died.
    public let idempotencyLockTimeout: TimeInterval = 60
    /// Keys are kept this long.
    public let idempotencyRetention: TimeInterval = 24 * 3600
    /// How many ended trips stay in memory for the reads that follow their end; memory holds every
    /// active trip and at most this many ended ones, however many trips have run.
    public let endedCacheLimit: Int
    /// How many times a transaction that lost to a concurrent one runs again before `TripError.contended`.
    public let conflictRetries: Int
    private let retried = Atomic<Int>(0)
    /// How many transactions have been run again after a conflict, since start.
    public var conflictsRetried: Int { retried.load(ordering: .relaxed) }

    /// The service over `store`; every effect (ids, time) and the directory are given by the composition root.
    public init(
        store: any TripStore, hub: TripEventHub = TripEventHub(), directory: any PartyDirectory,
        estimator: any TripEstimator = StraightLineEstimator(), ids: any IDGenerator,
        observers: [any TripChangeObserver] = [], endedCacheLimit: Int = 10_000, conflictRetries: Int = 8,
        payments: TripPayments? = nil, cities: Cities = .everywhere, node: String? = nil,
        now: @escaping @Sendable () -> Date
    ) {
        self.cities = cities
        self.node = node
        self.store = store; self.hub = hub; self.directory = directory; self.estimator = estimator; self.ids = ids;
        self.payments = payments
        self.observers = observers; self.endedCacheLimit = max(0, endedCacheLimit);
        self.conflictRetries = max(0, conflictRetries)
        self.now = now
        // A new road route changes a trip's ETA between fixes: refresh it and tell the watchers, as a fix does.
        estimator.onRouteChange { [weak self] id in await self?.routeChanged(id) }
    }

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

    /// How many trips memory holds now (every active one, and recently ended ones up to `endedCacheLimit`).
    public var cachedTripCount: Int { cache.withLock { $0.trips.count } }

    /// Loads every unfinished trip into memory and releases the idempotency keys of requests that died
    /// with the previous process (their retries run at once instead of waiting out the lock); call once
    /// at start, before serving. Returns how many keys were released.
    @discardableResult
    public func warm() async throws -> Int {
        let active = try store.activeTrips()
        let limit = endedCacheLimit
        cache.withLock { c in for trip in active { Self.remember(trip, in: &c, endedLimit: limit) } }
        let ratings = try store.providerRatings()
        ratingTotals.withLock { $0 = ratings }
        return try await store.releaseUnansweredIdempotency()
    }

    /// The current time as the service sees it.
    public func currentTime() -> Date { now() }

    // MARK: - Idempotency

    /// Claims `context`'s key, or says how to answer without running the request.
    public func claim(_ context: IdempotencyContext) async throws -> IdempotencyClaim {
        let at = now(), lock = idempotencyLockTimeout, retention = idempotencyRetention
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
    public func release(_ context: IdempotencyContext) async {
        _ = try? await transaction { tx in try await tx.deleteIdempotency(context.scope) }
    }

    static func finish(
        _ tx: any TripTransaction, _ context: IdempotencyContext?, _ result: Result<TripRecord, TripError>, at: Date
    ) async throws {
        guard let context else { return }
        try await tx.save(
            IdempotencyRecord(
                scope: context.scope, fingerprint: context.fingerprint, response: context.render(result), createdAt: at)
        )
    }

    // MARK: - Creating trips

    /// A customer asks for a ride (`POST /v1/trips`).
    public func requestRide(
        _ request: TripRequest, by account: Account, idempotency: IdempotencyContext? = nil
    ) async throws -> TripRecord {
        guard account.role == .customer else { throw TripError.forbidden("Only customers request rides.") }
        try Self.validate(request.pickup, "/pickup")
        try Self.validate(request.dropoff, "/dropoff")
        let city = try cities.city(for: request.pickup, pointer: "/pickup")
        guard estimator.products.contains(request.productID) else {
            throw TripError.invalid(
                pointer: "/productID", detail: "must be one of \(estimator.products.joined(separator: ", "))")
        }
        let at = now()
        var trip = TripRecord(
            id: ids.next(), kind: .ride, status: .ride(.searching), customerId: account.id,
            pickup: request.pickup, dropoff: request.dropoff, createdAt: at)
        trip.productID = request.productID
        trip.city = city
        guard let payments else {
            trip.quote = try await estimator.roadEstimates(
                pickup: request.pickup, dropoff: request.dropoff, departure: at
            )
            .first { $0.productID == request.productID }?.fare
            return try await create(trip, oneActive: true, by: account, idempotency: idempotency)
        }
        let quote = try await payments.quotes.acceptRide(request, by: account)
        if let active = activeTrips(customer: account.id).first(where: { $0.kind == .ride }) {
            // Refused before any money is held; stored for the key as the creating transaction would.
            return try await answer(.alreadyActive(active), idempotency: idempotency)
        }
        try await payments.checkBalance(of: account)
        let attempt = try await holdPayment(for: quote, by: account, idempotency: idempotency)
        trip.apply(quote, payment: attempt.payment)
        return try await create(trip, oneActive: true, by: account, idempotency: idempotency, attempt: attempt)
    }

    /// A customer places a delivery order (`POST /v1/orders`).
    public func placeOrder(
        _ request: PlaceOrderRequest, by account: Account, idempotency: IdempotencyContext? = nil
    ) async throws -> TripRecord {
        guard account.role == .customer else { throw TripError.forbidden("Only customers place orders.") }
        let merchant = try Self.checkBasket(
            merchantId: request.merchantId, items: request.items, destination: request.destination, directory: directory
        )
        try await estimator.checkCovered(request.destination, pointer: "/destination")
        let city = try cities.city(for: merchant.position, pointer: "/merchantId")
        // The basket's shape first, then whether the merchant sells each item.
        for (i, item) in request.items.enumerated() where merchant.item(sku: item.sku) == nil {
            throw TripError.invalid(
                pointer: "/items/\(i)/sku", detail: "merchant \(merchant.id) sells no item with sku \(item.sku)")
        }
        let at = now()
        var trip = TripRecord(
            id: ids.next(), kind: .delivery, status: .delivery(.placed), customerId: account.id,
            pickup: merchant.position, dropoff: request.destination, createdAt: at)
        trip.merchantId = merchant.id
        trip.city = city
        trip.items = request.items
        trip.merchantStep = .pending
        trip = estimator.refreshETA(trip, now: at)
        guard let payments else {
            return try await create(trip, oneActive: false, by: account, idempotency: idempotency)
        }
        let quote = try await payments.quotes.acceptOrder(request, by: account)
        try await payments.checkBalance(of: account)
        let attempt = try await holdPayment(for: quote, by: account, idempotency: idempotency)
        trip.apply(quote, payment: attempt.payment)
        return try await create(trip, oneActive: false, by: account, idempotency: idempotency, attempt: attempt)
    }

    /// The merchant of a basket whose shape is right (at least one item, skus named, quantities 1 to 99) to a valid
    /// destination.
    public static func checkBasket(
        merchantId: String, items: [OrderItem], destination: Coordinate, directory: any PartyDirectory
    ) throws(TripError) -> Merchant {
        guard let merchant = directory.merchant(id: merchantId) else {
            throw TripError.invalid(pointer: "/merchantId", detail: "no merchant with id \(merchantId)")
        }
        guard !items.isEmpty else { throw TripError.invalid(pointer: "/items", detail: "must list at least one item") }
        for (i, item) in items.enumerated() {
            if item.sku.trimmingCharacters(in: .whitespaces).isEmpty {
                throw TripError.invalid(pointer: "/items/\(i)/sku", detail: "must not be empty")
            }
            if item.quantity < 1 || item.quantity > 99 {
                throw TripError.invalid(pointer: "/items/\(i)/quantity", detail: "must be between 1 and 99")
            }
        }
        try validate(destination, "/destination")
        return merchant
    }

    /// Inserts `trip`; with `oneActive`, only when the customer has no unfinished trip of its kind,
    /// decided inside the inserting transaction so concurrent requests cannot both pass.
    private func create(
        _ trip: TripRecord, oneActive: Bool, by account: Account, idempotency: IdempotencyContext?,
        attempt: PaymentAttempt? = nil
    ) async throws -> TripRecord {
        let at = trip.createdAt
        let observers = self.observers
        let result: Result<TripRecord, TripError> = try await transaction { tx in
            let result: Result<TripRecord, TripError>
            if oneActive, let existingActive = try await tx.activeTrip(customer: trip.customerId, kind: trip.kind) {
                result = .failure(.alreadyActive(existingActive))
            } else {
                try await tx.insert(trip)
                try await tx.append(
                    ChangeLogEntry(
                        tripId: trip.id, version: trip.version, status: trip.status.name,
                        actorRole: account.role, actorId: account.id, serverTime: at))
                if let attempt { try await Self.attach(attempt, to: trip, in: tx, at: at) }
                for observer in observers { try await observer.tripChanged(from: nil, to: trip, in: tx) }
                result = .success(trip)
            }
            try await Self.finish(tx, idempotency, result, at: at)
            return result
        }
        if case .failure = result, let attempt {
            // The trip was refused after the hold was placed: give the money back now rather than at the reconciler's
            // pass.
            await releaseUnattached(attempt.quoteId, placed: attempt)
        }
        let created = try result.get()
        commit(created, previous: nil)
        return created
    }

    /// Answers `error` under the request's key as the creating transaction would, without changing anything else.
    func answer(_ error: TripError, idempotency: IdempotencyContext?) async throws -> TripRecord {
        let at = now()
        if let idempotency {
            try await transaction { tx in try await Self.finish(tx, idempotency, .failure(error), at: at) }
        }
        throw error
    }

    // MARK: - Moves

    /// Applies a move for `account`; provider steps carry a change id and the device's time.
    ///
    /// A change id seen before returns the trip without applying it again. A refused move throws
    /// `TripError.refused` with the real trip. `proofId` is recorded on the trip by a `delivered` step that applies.
    public func move(
        _ tripId: String, _ move: TripMove, by account: Account, deviceTime: Date? = nil, changeId: String? = nil,
        proofId: String? = nil, idempotency: IdempotencyContext? = nil
    ) async throws -> TripRecord {
        let at = now()
        let cached = cache.withLock { $0.trips[tripId] }
        let estimator = self.estimator
        let observers = self.observers
        let party = account.role
        let outcome: (result: Result<TripRecord, TripError>, previous: TripRecord)? = try await transaction { tx in
            guard var trip = try await tx.trip(tripId) else { return nil }
            let canSee: Bool
            if case .assignProvider = move, party == .provider {
                canSee = trip.providerId == nil || trip.providerId == account.id
            } else {
                canSee = trip.isVisible(to: account)
            }
            guard canSee else { return nil }
            // The latest fix lives in memory between changes; keep it on the stored record.
            if let fix = cached?.providerFix, cached?.providerId == trip.providerId,
                (fix.recordedAt, fix.seq) > (trip.providerFix?.recordedAt ?? .distantPast, trip.providerFix?.seq ?? 0)
            {
                trip.providerFix = fix
            }
            if let changeId, try await tx.change(tripId: tripId, changeId: changeId) != nil {
                return (.success(trip), trip)
            }
            let result: Result<TripRecord, TripError>
            switch TripRules.apply(move, to: trip, by: party, actorId: account.id, at: at) {
            case .failure(let refusal):
                result = .failure(.refused(refusal, trip))
            case .success(var next):
                next = estimator.refreshETA(next, now: at)
                // The proof is recorded with the step that applies, never by one that is refused or replayed.
                if let proofId, move == .delivery(.delivered) { next.proofId = proofId }
                try await tx.update(next, expectedVersion: trip.version)
                try await tx.append(
                    ChangeLogEntry(
                        tripId: next.id, version: next.version, status: next.status.name, actorRole: party,
                        actorId: account.id, serverTime: at, deviceTime: deviceTime, changeId: changeId))
                for observer in observers { try await observer.tripChanged(from: trip, to: next, in: tx) }
                if trip.status.isActive, !next.status.isActive, next.payment != nil {
                    try await tx.enqueue(PaymentJob.settle(next.id).message(at: at))
                }
                result = .success(next)
            }
            try await Self.finish(tx, idempotency, result, at: at)
            return (result, trip)
        }
        guard let (result, previous) = outcome else { throw TripError.notFound }
        if case .failure(.refused(_, let current)) = result { remember(current) }
        let trip = try result.get()
        commit(trip, previous: previous, changed: trip.version != previous.version)
        return trip
    }

    /// Keeps the customer's Live Activity push token on the order (no version change).
    public func setLiveActivityToken(_ token: String, order: String, by account: Account) async throws {
        guard token.count >= 16, token.count <= 512, token.allSatisfy(\.isHexDigit) else {
            throw TripError.invalid(pointer: "/token", detail: "must be the push token as hex")
        }
        let updated: TripRecord? = try await transaction { tx in
            guard var trip = try await tx.trip(order), trip.kind == .delivery, trip.customerId == account.id else {
                return nil
            }
            trip.liveActivityToken = token.lowercased()
            try await tx.update(trip, expectedVersion: trip.version)
            return trip
        }
        guard let updated else { throw TripError.notFound }
        remember(updated)
    }

    // MARK: - Live location

    /// Puts a provider's fixes (oldest first) on their active trip, one after another, skipping any no
    /// newer than the trip's, and tells its watchers once with every step, so a batch costs each
    /// watcher one write. Returns the trip as left, or nil when nothing changed.
    @discardableResult
    public func recordFixes(_ fixes: [LocationFix], provider: String, shared: Bool = true) -> TripRecord? {
        let at = now()
        let estimator = self.estimator
        let steps: [TripRecord] = cache.withLock { c in
            guard
                let id = c.activeByProvider[provider]?.max(by: {
                    (c.trips[$0]?.createdAt ?? .distantPast) < (c.trips[$1]?.createdAt ?? .distantPast)
                }),
                var trip = c.trips[id]
            else { return [] }
            var steps: [TripRecord] = []
            for fix in fixes {
                if let last = trip.providerFix, last.recordedAt >= fix.recordedAt { continue }
                trip.providerFix = ProviderFix(
                    coordinate: fix.coordinate, heading: fix.heading, speed: fix.speed, recordedAt: fix.recordedAt,
                    seq: (trip.providerFix?.seq ?? 0) + 1)
                trip = estimator.refreshETA(trip, now: at)
                steps.append(trip)
            }
            c.trips[id] = trip
            return steps
        }
        guard let last = steps.last else { return nil }
        hub.publish(steps)
        if shared {
            let kept = fixes.filter { fix in steps.contains { $0.providerFix?.recordedAt == fix.recordedAt } }
            for listener in fixListeners.withLock({ $0 }) { listener(last, kept) }
        }
        return last
    }

    /// Calls `listener` with the trip and the fixes this node kept on it (`recordFixes`), not with fixes another node
    /// sent.
    public func onFixes(_ listener: @escaping @Sendable (_ trip: TripRecord, _ fixes: [LocationFix]) -> Void) {
        fixListeners.withLock { $0.append(listener) }
    }

    /// Takes a version another node committed (from the live bus or a resync): kept when it is not older than the one
    /// held, then told to this node's watchers and change listeners, never to its commit listeners (the committing
    /// node ran those side effects).
    public func absorb(_ record: TripRecord) {
        var trip = record
        let limit = endedCacheLimit
        let kept: TripRecord?? = cache.withLock { c in
            let old = c.trips[trip.id]
            // Fixes travel apart from versions: a newer one held here stays on the record.
            if let fix = old?.providerFix, old?.providerId == trip.providerId,
                (fix.recordedAt, fix.seq) > (trip.providerFix?.recordedAt ?? .distantPast, trip.providerFix?.seq ?? 0)
            {
                trip.providerFix = fix
            }
            if let old, old == trip { return nil }
            return Self.remember(trip, in: &c, endedLimit: limit) ? .some(old) : nil
        }
        guard let kept else { return }
        hub.publish([trip])
        for listener in commitListeners.withLock({ $0 }) where listener.everywhere { listener.call(kept, trip) }
    }

    /// A new road route arrived for `tripId`: its ETA (and where its provider is drawn) is computed again on the same
    /// fix and, when it changed, published as a new step of that fix (`seq` + 1, so clients that keep the newest
    /// `seq` take it), and written down when it drifted as a fix's would be (the Live Activity hears of it).
    func routeChanged(_ tripId: String) async {
        let at = now()
        let estimator = self.estimator
        let step: TripRecord? = cache.withLock { c in
            guard let trip = c.trips[tripId], trip.status.isActive else { return nil }
            var next = estimator.refreshETA(trip, now: at)
            guard
                next.etaEarliest != trip.etaEarliest || next.etaLatest != trip.etaLatest
                    || next.providerFix?.snapped != trip.providerFix?.snapped
            else {
                return nil
            }
            next.providerFix?.seq += 1
            c.trips[tripId] = next
            return next
        }
        guard let step else { return }
        hub.publish([step])
        _ = try? await persistETADrift(of: tripId)
    }

    /// Keeps the map-matched path of a finished trip on its record (no version change) and returns it.
    @discardableResult
    public func recordMatchedPath(
        of tripId: String, distanceMeters: Double, durationSeconds: Double
    ) async throws -> TripRecord? {
        let updated: TripRecord? = try await transaction { tx in
            guard var trip = try await tx.trip(tripId) else { return nil }
            trip.matchedDistanceMeters = distanceMeters
            trip.matchedDurationSeconds = durationSeconds
            try await tx.update(trip, expectedVersion: trip.version)
            return trip
        }
        if let updated { remember(updated) }
        return updated
    }

    /// How far a fix-driven ETA must move from the stored one before it is written down (and
    /// observers, such as the Live Activity planner, see the drift in a transaction).
    public var etaDriftToPersist: TimeInterval { 60 }

    /// The least time between a trip's last write and a drift write: at most one a minute per trip,
    /// however fast its fixes come (the watchers get every fix's ETA live, unwritten).
    public var etaDriftMinInterval: TimeInterval { 60 }

    /// Stores the ETA a fix moved, when it drifted enough from the stored one and the trip was not
    /// written in the last `etaDriftMinInterval`: no version change, one transaction, observers
    /// called with the stored record as `old`. Returns whether it wrote.
    @discardableResult
    public func persistETADrift(of tripId: String) async throws -> Bool {
        let known = cache.withLock { c in c.trips[tripId].map { ($0, c.stored[tripId]) } }
        guard let (current, stored) = known, current.status.isActive, let latest = current.etaLatest else {
            return false
        }
        let threshold = etaDriftToPersist, interval = etaDriftMinInterval, at = now()
        // Decided in memory for nearly every batch, without a transaction.
        if let stored {
            if at.timeIntervalSince(stored.at) < interval { return false }
            if let eta = stored.eta, abs(latest.timeIntervalSince(eta)) < threshold { return false }
        }
        let observers = self.observers
        let wrote = try await transaction { tx in
            guard let stored = try await tx.trip(tripId), stored.version == current.version,
                at.timeIntervalSince(stored.updatedAt) >= interval,
                abs(latest.timeIntervalSince(stored.etaLatest ?? .distantPast)) >= threshold
            else { return false }
            var next = stored
            next.etaEarliest = current.etaEarliest
            next.etaLatest = current.etaLatest
            next.providerFix = current.providerFix
            next.updatedAt = at
            try await tx.update(next, expectedVersion: stored.version)
            for observer in observers { try await observer.tripChanged(from: stored, to: next, in: tx) }
            return true
        }
        if wrote {
            cache.withLock { c in if c.trips[tripId]?.version == current.version { c.stored[tripId] = (latest, at) } }
        }
        return wrote
    }

    // MARK: - Reads

    /// The trip if `account` may see it; `TripError.notFound` otherwise.
    public func trip(_ id: String, for account: Account) throws -> TripRecord {
        guard let trip = try cached(id), trip.isVisible(to: account) else { throw TripError.notFound }
        return trip
    }

    /// `body`'s answer on the trip if `account` may see it, read in place (no copy of the record); `TripError.notFound`
    /// otherwise.
    public func withTrip<R>(_ id: String, for account: Account, _ body: (borrowing TripRecord) throws -> R) throws -> R
    {
        let held: Held
        if let hit = cache.withLock({ $0.trips.held(id) }) {
            held = hit
        } else {
            guard let stored = try store.trip(id: id) else { throw TripError.notFound }
            remember(stored)
            held = Held(stored)
        }
        // Borrowed from the held reference, kept alive for the call: the optimizer copies `held.record` otherwise.
        return try withExtendedLifetime(held) { held in
            guard held.record.isVisible(to: account) else { throw TripError.notFound }
            return try body(held.record)
        }
    }

    /// The trip by id regardless of who asks (for the service's own use).
    public func cached(_ id: String) throws -> TripRecord? {
        if let hit = cache.withLock({ $0.trips.held(id) }) { return hit.record }
        guard let stored = try store.trip(id: id) else { return nil }
        remember(stored)
        return stored
    }

    /// A page of the trips `query` selects, read from the store through its index (never filtered in memory).
    public func trips(_ query: TripQuery, after cursor: TripCursor?, limit: Int) throws -> TripPage {
        try store.trips(query, after: cursor, limit: limit)
    }

    /// The customer's unfinished trips, newest first.
    public func activeTrips(customer: String) -> [TripRecord] {
        cache.withLock { c in (c.activeByCustomer[customer] ?? []).compactMap { c.trips[$0] } }
            .sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
    }

    /// The provider's unfinished trips, newest first.
    public func activeTrips(provider: String) -> [TripRecord] {
        cache.withLock { c in (c.activeByProvider[provider] ?? []).compactMap { c.trips[$0] } }
            .sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
    }

    /// Every unfinished trip, newest first (all are in memory): the ops console's live city.
    public func activeTrips() -> [TripRecord] {
        cache.withLock { c in c.trips.filter { $0.status.isActive } }.sorted {
            ($0.createdAt, $0.id) > ($1.createdAt, $1.id)
        }
    }

    /// Trips in memory whose payment is still a hold placed before `cutoff`.
    func heldTrips(placedBefore cutoff: Date) -> [TripRecord] {
        cache.withLock { c in c.trips.filter { $0.payment?.state == .held && $0.createdAt < cutoff } }
    }

    /// The average of the customers' ratings of `provider`, nil before anyone rated them (the profile's rating stands).
    public func averageRating(provider: String) -> Double? {
        ratingTotals.withLock { $0[provider] }.flatMap { $0.count > 0 ? $0.average : nil }
    }

    func noteRating(provider: String, stars: Int) {
        ratingTotals.withLock {
            $0[provider, default: RatingTotal(count: 0, sum: 0)].count += 1; $0[provider]!.sum += stars
        }
    }

    /// How many rides are waiting for a provider within `radius` metres of `point` (the demand side of the busy-time
    /// multiplier).
    public func openRequests(near point: Coordinate, within radius: Double) -> Int {
        cache.withLock { c in
            c.searching.reduce(0) { n, id in
                n + (c.trips[id].map { StraightLineEstimator.distance($0.pickup, point) <= radius } == true ? 1 : 0)
            }
        }
    }

    /// True when the provider has no unfinished trip.
    public func isIdle(provider: String) -> Bool {
        cache.withLock { $0.activeByProvider[provider]?.isEmpty ?? true }
    }

    // MARK: - Commit listeners

    /// Calls `listener` after every committed creation (`old` nil) or change, in commit order per trip.
    /// It runs on the committing task and must not block (dispatch and provider streams hand work off).
    public func onCommit(_ listener: @escaping @Sendable (_ old: TripRecord?, _ new: TripRecord) -> Void) {
        commitListeners.withLock { $0.append((false, listener)) }
    }

    /// Calls `listener` after every change this node learns of: its own commits (as `onCommit`) and the versions other
    /// nodes committed (`absorb`). For what shows a trip (provider streams, pages); side effects belong in `onCommit`.
    public func onChange(_ listener: @escaping @Sendable (_ old: TripRecord?, _ new: TripRecord) -> Void) {
        commitListeners.withLock { $0.append((true, listener)) }
    }

    // MARK: - Internals

    func commit(_ trip: TripRecord, previous: TripRecord?, changed: Bool = true) {
        // Concurrent commits of one trip can get here out of order: a watcher never sees a version go back.
        if remember(trip) { hub.publish([trip]) }
        // A replayed change id commits nothing new.
        guard changed else { return }
        estimator.tripCommitted(from: previous, to: trip, at: now())
        for listener in commitListeners.withLock({ $0 }) { listener.call(previous, trip) }
    }

    /// Keeps `trip` in memory unless a newer version is there already; says whether it kept it.
    @discardableResult
    private func remember(_ trip: TripRecord) -> Bool {
        let limit = endedCacheLimit
        return cache.withLock { Self.remember(trip, in: &$0, endedLimit: limit) }
    }

    @discardableResult
    private static func remember(_ trip: TripRecord, in c: inout Cache, endedLimit: Int) -> Bool {
        if let old = c.trips[trip.id], old.version > trip.version { return false }
        let wasKnownEnded = c.trips[trip.id].map { !$0.status.isActive } ?? false
        if let old = c.trips[trip.id], let provider = old.providerId,
            provider != trip.providerId || !trip.status.isActive
        {
            Self.forget(provider, trip.id, in: &c.activeByProvider)
        }
        c.trips[trip.id] = trip
        if trip.status == .ride(.searching) { c.searching.insert(trip.id) } else { c.searching.remove(trip.id) }
        c.stored[trip.id] = trip.status.isActive ? (trip.etaLatest, trip.updatedAt) : nil
        if trip.status.isActive {
            c.activeByCustomer[trip.customerId, default: []].insert(trip.id)
            if let provider = trip.providerId { c.activeByProvider[provider, default: []].insert(trip.id) }
        } else {
            Self.forget(trip.customerId, trip.id, in: &c.activeByCustomer)
            if let provider = trip.providerId { Self.forget(provider, trip.id, in: &c.activeByProvider) }
            if !wasKnownEnded { c.ended.append(trip.id) }
            // Keep at most `endedLimit` ended trips; the oldest go first (an active one is never dropped).
            while c.ended.count - c.endedHead > endedLimit {
                let oldest = c.ended[c.endedHead]
                c.endedHead += 1
                if let kept = c.trips[oldest], !kept.status.isActive { c.trips[oldest] = nil }
            }
            if c.endedHead > 1024, c.endedHead * 2 > c.ended.count {
                c.ended.removeFirst(c.endedHead)
                c.endedHead = 0
            }
        }
        return true
    }

    /// Removes `tripId` from `owner`'s set, and the set itself once empty, so that accounts that come
    /// and go leave nothing behind.
    private static func forget(_ owner: String, _ tripId: String, in index: inout [String: Set<String>]) {
        guard var set = index[owner] else { return }
        set.remove(tripId)
        index[owner] = set.isEmpty ? nil : set
    }

    /// Checks a coordinate is on Earth; the error names the JSON pointer of the bad half.
    public static func validate(_ c: Coordinate, _ pointer: String) throws(TripError) {
        guard c.lat.isFinite, (-90...90).contains(c.lat) else {
            throw TripError.invalid(pointer: pointer + "/lat", detail: "must be between -90 and 90")
        }
        guard c.lng.isFinite, (-180...180).contains(c.lng) else {
            throw TripError.invalid(pointer: pointer + "/lng", detail: "must be between -180 and 180")
        }
    }
}
