public import Foundation
public import EnRouteModels

/// The trip service: every trip as a versioned state machine, put together from services with one job each and
/// answering for them in one place.
///
/// - `lifecycle`: creating rides and orders and every move of the trip machine (`TripLifecycle`);
/// - `live`: fixes, ETAs and other nodes' versions (`LiveTrips`);
/// - `cache`: the trips in memory, which serve every read (`TripCache`);
/// - `settlement` and `holds`: the money of each trip (`TripSettlement`, `PaymentHolds`);
/// - `feedback`: tips and ratings (`TipsAndRatings`).
///
/// Every change is one transaction (`TripCommits`): load, check, apply, bump, log, remember the key; changes are
/// published to watchers after they commit.
public final class TripService: Sendable {
    public let commits: TripCommits
    public let cache: TripCache
    public let lifecycle: TripLifecycle
    public let live: LiveTrips
    public let feedback: TipsAndRatings
    /// The trip's money; nil for a service that takes no money (domain tests that exercise only the trip machine).
    public let holds: PaymentHolds?
    public let settlement: TripSettlement?
    public let hub: TripEventHub
    public let estimator: any TripEstimator

    /// The service over `store`; every effect (ids, time) and the directory are given by the composition root.
    public init(
        store: any TripStore, hub: TripEventHub = TripEventHub(), directory: any PartyDirectory,
        estimator: any TripEstimator = StraightLineEstimator(), ids: any IDGenerator,
        observers: [any TripChangeObserver] = [], endedCacheLimit: Int = 10_000, conflictRetries: Int = 8,
        payments: TripPayments? = nil, cities: Cities = .everywhere, node: String? = nil,
        now: @escaping @Sendable () -> Date
    ) {
        let cache = TripCache(store: store, endedLimit: endedCacheLimit)
        let commits = TripCommits(
            store: store, cache: cache, hub: hub, estimator: estimator, observers: observers, node: node,
            conflictRetries: conflictRetries, now: now)
        let holds = payments.map { PaymentHolds(payments: $0, commits: commits) }
        let settlement = holds.map { TripSettlement(payments: $0.payments, commits: commits, holds: $0) }
        self.commits = commits; self.cache = cache; self.hub = hub; self.estimator = estimator
        self.holds = holds; self.settlement = settlement
        lifecycle = TripLifecycle(
            cities: cities, directory: directory, estimator: estimator, commits: commits, holds: holds, ids: ids)
        live = LiveTrips(commits: commits, estimator: estimator)
        feedback = TipsAndRatings(commits: commits, settlement: settlement)
    }

    public var store: any TripStore { commits.store }
    public var cities: Cities { lifecycle.cities }
    public var directory: any PartyDirectory { lifecycle.directory }
    public var payments: TripPayments? { holds?.payments }
    /// This node's id when it is one of several sharing a store (`FanOut`); nil on a node of its own.
    public var node: String? { commits.node }
    /// Answers stored under idempotency keys are kept this long.
    public var idempotencyRetention: TimeInterval { TripCommits.idempotencyRetention }
    /// How many ended trips stay in memory for the reads that follow their end.
    public var endedCacheLimit: Int { cache.endedLimit }
    /// How many transactions have been run again after a conflict, since start.
    public var conflictsRetried: Int { commits.conflictsRetried }
    /// How many trips memory holds now (every active one, and recently ended ones up to `endedCacheLimit`).
    public var cachedTripCount: Int { cache.count }

    /// Loads every unfinished trip into memory and releases the idempotency keys of requests that died
    /// with the previous process (their retries run at once instead of waiting out the lock); call once
    /// at start, before serving. Returns how many keys were released.
    @discardableResult
    public func warm() async throws -> Int {
        cache.remember(try store.activeTrips())
        try feedback.warm()
        return try await store.releaseUnansweredIdempotency()
    }

    /// The current time as the service sees it.
    public func currentTime() -> Date { commits.now() }

    // MARK: - Requests

    /// Claims `context`'s key, or says how to answer without running the request.
    public func claim(_ context: IdempotencyContext) async throws -> IdempotencyClaim {
        try await commits.claim(context)
    }

    /// Forgets a claimed key whose request failed before changing anything, so a retry runs again.
    public func release(_ context: IdempotencyContext) async { await commits.release(context) }

    /// A customer asks for a ride (`POST /v1/trips`).
    public func requestRide(
        _ request: TripRequest, by account: Account, idempotency: IdempotencyContext? = nil
    ) async throws -> TripRecord {
        try await lifecycle.requestRide(request, by: account, idempotency: idempotency)
    }

    /// A customer places a delivery order (`POST /v1/orders`).
    public func placeOrder(
        _ request: PlaceOrderRequest, by account: Account, idempotency: IdempotencyContext? = nil
    ) async throws -> TripRecord {
        try await lifecycle.placeOrder(request, by: account, idempotency: idempotency)
    }

    /// Applies a move for `account` (`TripLifecycle.move`).
    public func move(
        _ tripId: String, _ move: TripMove, by account: Account, deviceTime: Date? = nil, changeId: String? = nil,
        proofId: String? = nil, idempotency: IdempotencyContext? = nil
    ) async throws -> TripRecord {
        try await lifecycle.move(
            tripId, move, by: account, deviceTime: deviceTime, changeId: changeId, proofId: proofId,
            idempotency: idempotency)
    }

    /// A courier takes an order on the route over it and the orders they carry (`TripLifecycle.assignStacked`).
    public func assignStacked(_ tripId: String, to courier: String, stops: [PlannedStop]) async throws -> TripRecord {
        try await lifecycle.assignStacked(tripId, to: courier, stops: stops)
    }

    /// The merchant marks basket lines missing or replaced before the order is ready.
    public func changeBasket(
        _ orderId: String, changes: [BasketItemChange], by account: Account, idempotency: IdempotencyContext?
    ) async throws -> TripRecord {
        try await lifecycle.changeBasket(orderId, changes: changes, by: account, idempotency: idempotency)
    }

    /// The merchant of a basket whose shape is right, to a valid destination.
    public static func checkBasket(
        merchantId: String, items: [OrderItem], destination: Coordinate, directory: any PartyDirectory
    ) throws(TripError) -> Merchant {
        try TripLifecycle.checkBasket(
            merchantId: merchantId, items: items, destination: destination, directory: directory)
    }

    /// Checks a coordinate is on Earth; the error names the JSON pointer of the bad half.
    public static func validate(_ c: Coordinate, _ pointer: String) throws(TripError) {
        try TripLifecycle.validate(c, pointer)
    }

    // MARK: - Reads

    /// The trip if `account` may see it; `TripError.notFound` otherwise.
    public func trip(_ id: String, for account: Account) throws -> TripRecord { try cache.trip(id, for: account) }

    /// `body`'s answer on the trip if `account` may see it, read in place (no copy of the record).
    public func withTrip<R>(_ id: String, for account: Account, _ body: (borrowing TripRecord) throws -> R) throws -> R
    {
        try cache.withTrip(id, for: account, body)
    }

    /// The trip by id regardless of who asks (for the service's own use).
    public func cached(_ id: String) throws -> TripRecord? { try cache.cached(id) }

    /// A page of the trips `query` selects, read from the store through its index (never filtered in memory).
    public func trips(_ query: TripQuery, after cursor: TripCursor?, limit: Int) throws -> TripPage {
        try store.trips(query, after: cursor, limit: limit)
    }

    /// The customer's unfinished trips, newest first.
    public func activeTrips(customer: String) -> [TripRecord] { cache.activeTrips(customer: customer) }

    /// The provider's unfinished trips, newest first.
    public func activeTrips(provider: String) -> [TripRecord] { cache.activeTrips(provider: provider) }

    /// Every unfinished trip, newest first (all are in memory): the ops console's live city.
    public func activeTrips() -> [TripRecord] { cache.activeTrips() }

    /// True when the provider has no unfinished trip.
    public func isIdle(provider: String) -> Bool { cache.isIdle(provider: provider) }

    /// The pickups of the rides waiting for a provider (the demand side of the busy-time multiplier).
    public func openPickups() -> [Coordinate] { cache.openPickups() }

    /// The average of the customers' ratings of `provider`, nil before anyone rated them.
    public func averageRating(provider: String) -> Double? { feedback.averageRating(provider: provider) }

    // MARK: - Live position and ETA

    /// Puts a provider's fixes (oldest first) on their active trip (`LiveTrips.recordFixes`).
    @discardableResult
    public func recordFixes(_ fixes: [LocationFix], provider: String, shared: Bool = true) -> TripRecord? {
        live.recordFixes(fixes, provider: provider, shared: shared)
    }

    /// Calls `listener` with the trip and the fixes this node kept on it.
    public func onFixes(_ listener: @escaping @Sendable (_ trip: TripRecord, _ fixes: [LocationFix]) -> Void) {
        live.onFixes(listener)
    }

    /// Takes a version another node committed (`LiveTrips.absorb`).
    public func absorb(_ record: TripRecord) { live.absorb(record) }

    /// Keeps the map-matched path of a finished trip on its record (no version change) and returns it.
    @discardableResult
    public func recordMatchedPath(
        of tripId: String, distanceMeters: Double, durationSeconds: Double
    ) async throws -> TripRecord? {
        try await live.recordMatchedPath(of: tripId, distanceMeters: distanceMeters, durationSeconds: durationSeconds)
    }

    /// Stores the ETA a fix moved when it drifted enough (`LiveTrips.persistETADrift`); returns whether it wrote.
    @discardableResult
    public func persistETADrift(of tripId: String) async throws -> Bool { try await live.persistETADrift(of: tripId) }

    /// Keeps the customer's Live Activity push token on the order (no version change).
    public func setLiveActivityToken(_ token: String, order: String, by account: Account) async throws {
        try await lifecycle.setLiveActivityToken(token, order: order, by: account)
    }

    // MARK: - Money, tips and ratings

    /// What settling a trip did.
    public typealias Settlement = TripSettlement.Settlement
    /// The gateway callbacks `apply(_:)` acts on.
    public static var appliedPaymentEvents: Set<String> { TripSettlement.appliedPaymentEvents }

    private var money: TripSettlement {
        get throws(TripError) { try TripSettlement.required(settlement) }
    }

    /// Settles the ended trip's payment (`TripSettlement.settlePayment`).
    @discardableResult
    public func settlePayment(
        of tripId: String, measurement: (any TripMeasurement)?, final: Bool = false
    ) async throws -> Settlement {
        try await money.settlePayment(of: tripId, measurement: measurement, final: final)
    }

    /// Pays what the customer owes on the default card.
    public func settleBalance(by account: Account, key: String) async throws -> AccountBalance {
        try await money.settleBalance(by: account, key: key)
    }

    /// Applies a gateway callback (`TripSettlement.apply`).
    public func apply(_ event: GatewayEvent) async throws { try await money.apply(event) }

    /// One pass of the payment reconciler; returns how many holds it acted on.
    @discardableResult
    public func reconcilePayments() async throws -> Int { try await money.reconcilePayments() }

    /// Queues work for the payment worker outside any trip change; false for a callback `apply(_:)` would ignore.
    @discardableResult
    public func enqueuePaymentJob(_ job: PaymentJob) async throws -> Bool { try await money.enqueuePaymentJob(job) }

    /// The receipt of a trip the caller may see, once its payment settled (`nil` before).
    public func receipt(of tripId: String, for account: Account, path: [Coordinate]) throws -> Receipt? {
        let trip = try cache.trip(tripId, for: account)
        return Receipts.receipt(
            trip, changes: try store.changes(tripId: tripId), ledger: try store.ledger(tripId: tripId), path: path)
    }

    /// The customer tips the provider once, within the tip window after the trip ended.
    public func tip(
        _ tripId: String, amountMinor: Int, by account: Account, idempotency: IdempotencyContext?
    ) async throws -> TripRecord {
        try await feedback.tip(tripId, amountMinor: amountMinor, by: account, idempotency: idempotency)
    }

    /// Charges a recorded tip (the payment worker's job).
    public func chargeTip(of tripId: String) async throws { try await feedback.chargeTip(of: tripId) }

    /// A party rates the other once the trip is complete.
    public func rate(_ tripId: String, stars: Int, comment: String?, by account: Account) async throws -> TripRecord {
        try await feedback.rate(tripId, stars: stars, comment: comment, by: account)
    }

    // MARK: - Listeners

    /// Calls `listener` after every committed creation (`old` nil) or change, in commit order per trip.
    /// It runs on the committing task and must not block (dispatch and provider streams hand work off).
    public func onCommit(_ listener: @escaping @Sendable (_ old: TripRecord?, _ new: TripRecord) -> Void) {
        commits.onCommit(listener)
    }

    /// Calls `listener` after every change this node learns of: its own commits (as `onCommit`) and the versions other
    /// nodes committed (`absorb`). For what shows a trip (provider streams, pages); side effects belong in `onCommit`.
    public func onChange(_ listener: @escaping @Sendable (_ old: TripRecord?, _ new: TripRecord) -> Void) {
        commits.onChange(listener)
    }
}
