public import Foundation
public import EnRouteModels

/// A trip's life from its request to its end: creating rides and orders (with the hold on the customer's card) and
/// every move of the trip machine, each in one transaction: load, check, apply, bump, log, remember the key.
public final class TripLifecycle: Sendable {
    /// The cities trips are partitioned by: a trip belongs to the one holding its pickup.
    public let cities: Cities
    public let directory: any PartyDirectory
    let estimator: any TripEstimator
    let commits: TripCommits
    let holds: PaymentHolds?
    private let ids: any IDGenerator

    init(
        cities: Cities, directory: any PartyDirectory, estimator: any TripEstimator, commits: TripCommits,
        holds: PaymentHolds?, ids: any IDGenerator
    ) {
        self.cities = cities; self.directory = directory; self.estimator = estimator
        self.commits = commits; self.holds = holds; self.ids = ids
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
        let at = commits.now()
        try BookingAhead.check(request.scheduledFor, now: at)
        var trip = TripRecord(
            id: ids.next(), kind: .ride, status: .ride(.searching), customerId: account.id,
            pickup: request.pickup, dropoff: request.dropoff, createdAt: at)
        trip.productID = request.productID
        trip.city = city
        trip.scheduledFor = request.scheduledFor
        // One ride asked for now at a time; rides booked ahead are outside that rule (they are deliberate, and may run
        // beside a ride taken now).
        let oneActive = request.scheduledFor == nil
        guard let holds else {
            trip.quote = try await estimator.roadEstimates(
                pickup: request.pickup, dropoff: request.dropoff, departure: request.scheduledFor ?? at
            )
            .first { $0.productID == request.productID }?.fare
            return try await create(trip, oneActive: oneActive, by: account, idempotency: idempotency)
        }
        let quote = try await holds.payments.quotes.acceptRide(request, by: account)
        if oneActive,
            let active = commits.cache.activeTrips(customer: account.id).first(where: {
                $0.kind == .ride && $0.scheduledFor == nil
            })
        {
            // Refused before any money is held; stored for the key as the creating transaction would.
            return try await commits.answer(.alreadyActive(active), idempotency: idempotency)
        }
        try await holds.payments.checkBalance(of: account)
        if request.scheduledFor != nil {
            return try await createBooked(trip, on: quote, holds: holds, by: account, idempotency: idempotency)
        }
        let attempt = try await holds.hold(quote, by: account, idempotency: idempotency)
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
        let at = commits.now()
        try BookingAhead.check(request.scheduledFor, now: at)
        var trip = TripRecord(
            id: ids.next(), kind: .delivery, status: .delivery(.placed), customerId: account.id,
            pickup: merchant.position, dropoff: request.destination, createdAt: at)
        trip.merchantId = merchant.id
        trip.city = city
        trip.scheduledFor = request.scheduledFor
        trip.items = request.items
        trip.merchantStep = .pending
        trip = estimator.refreshETA(trip, now: at)
        guard let holds else {
            return try await create(trip, oneActive: false, by: account, idempotency: idempotency)
        }
        let quote = try await holds.payments.quotes.acceptOrder(request, by: account)
        try await holds.payments.checkBalance(of: account)
        if request.scheduledFor != nil {
            return try await createBooked(trip, on: quote, holds: holds, by: account, idempotency: idempotency)
        }
        let attempt = try await holds.hold(quote, by: account, idempotency: idempotency)
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

    /// Inserts a trip booked ahead priced on `quote`, with no hold: the account must have a saved card, which is held
    /// when the trip's search begins (`startMatching`).
    private func createBooked(
        _ trip: TripRecord, on quote: Quote, holds: PaymentHolds, by account: Account,
        idempotency: IdempotencyContext?
    ) async throws -> TripRecord {
        try await holds.payments.requireCard(of: account)
        var priced = trip
        priced.apply(quote)
        return try await create(priced, oneActive: false, by: account, idempotency: idempotency)
    }

    /// Inserts `trip`; with `oneActive`, only when the customer has no unfinished trip of its kind,
    /// decided inside the inserting transaction so concurrent requests cannot both pass.
    private func create(
        _ trip: TripRecord, oneActive: Bool, by account: Account, idempotency: IdempotencyContext?,
        attempt: PaymentAttempt? = nil
    ) async throws -> TripRecord {
        let at = trip.createdAt
        let observers = commits.observers
        let result: Result<TripRecord, TripError> = try await commits.transaction { tx in
            let result: Result<TripRecord, TripError>
            if oneActive, let existingActive = try await tx.activeTrip(customer: trip.customerId, kind: trip.kind) {
                result = .failure(.alreadyActive(existingActive))
            } else {
                try await tx.insert(trip)
                try await tx.append(
                    ChangeLogEntry(
                        tripId: trip.id, version: trip.version, status: trip.status.name,
                        actorRole: account.role, actorId: account.id, serverTime: at))
                if let attempt { try await PaymentHolds.attach(attempt, to: trip, in: tx, at: at) }
                for observer in observers { try await observer.tripChanged(from: nil, to: trip, in: tx) }
                result = .success(trip)
            }
            try await TripCommits.finish(tx, idempotency, result, at: at)
            return result
        }
        if case .failure = result, let attempt {
            // The trip was refused after the hold was placed: give the money back now rather than at the reconciler's
            // pass.
            await holds?.releaseUnattached(attempt.quoteId, placed: attempt)
        }
        let created = try result.get()
        commits.commit(created, previous: nil)
        return created
    }

    // MARK: - Moves

    /// Applies a move for `account`; provider steps carry a change id and the device's time.
    ///
    /// A change id seen before returns the trip without applying it again. A refused move throws
    /// `TripError.refused` with the real trip. `proofId` is recorded on the trip by a `delivered` step that applies.
    /// `plan` is the route a courier taking the trip drives over it and the orders they carry (`assignStacked`).
    public func move(
        _ tripId: String, _ move: TripMove, by account: Account, deviceTime: Date? = nil, changeId: String? = nil,
        proofId: String? = nil, idempotency: IdempotencyContext? = nil, plan: [PlannedStop]? = nil
    ) async throws -> TripRecord {
        // A booked trip handed to a provider before its search began holds its card first, as the search would.
        if case .assignProvider = move, commits.cache.inMemory(tripId)?.isBookedAhead == true,
            case .refused(let cancelled) = try await startMatching(tripId)
        {
            throw TripError.refused(MoveRefusal(cancelled.cancellation?.reason ?? Self.declinedReason), cancelled)
        }
        let at = commits.now()
        let cached = commits.cache.inMemory(tripId)
        let memory = commits.cache
        let estimator = self.estimator
        let observers = commits.observers
        let party = account.role
        typealias Outcome = (
            result: Result<TripRecord, TripError>, previous: TripRecord, others: [(old: TripRecord, new: TripRecord)]
        )
        let outcome: Outcome? = try await commits.transaction { tx in
            guard var trip = try await tx.trip(tripId), Self.canMove(trip, move, by: account) else { return nil }
            // The latest fix lives in memory between changes; keep it on the stored record.
            trip.keepNewerFix(of: cached)
            if let changeId, try await tx.change(tripId: tripId, changeId: changeId) != nil {
                return (.success(trip), trip, [])
            }
            let result: Result<TripRecord, TripError>
            var others: [(old: TripRecord, new: TripRecord)] = []
            switch TripRules.apply(move, to: trip, by: party, actorId: account.id, at: at) {
            case .failure(let refusal):
                result = .failure(.refused(refusal, trip))
            case .success(var next):
                if let plan, case .assignProvider = move { next.stops = plan }
                others = try await Self.replan(
                    &next, previous: trip, in: tx, at: at, estimator: estimator, observers: observers,
                    cached: memory.inMemory)
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
            try await TripCommits.finish(tx, idempotency, result, at: at)
            return (result, trip, others)
        }
        guard let (result, previous, others) = outcome else { throw TripError.notFound }
        if case .failure(.refused(_, let current)) = result { commits.cache.remember(current) }
        let trip = try result.get()
        commits.commit(trip, previous: previous, changed: trip.version != previous.version)
        for other in others { commits.commit(other.new, previous: other.old) }
        return trip
    }

    /// Whether `account` may make `move` on `trip`: its parties, and any provider taking a trip no one has.
    private static func canMove(_ trip: TripRecord, _ move: TripMove, by account: Account) -> Bool {
        if case .assignProvider = move, account.role == .provider {
            return trip.providerId == nil || trip.providerId == account.id
        }
        return trip.isVisible(to: account)
    }

    /// Keeps the customer's Live Activity push token on the order (no version change).
    public func setLiveActivityToken(_ token: String, order: String, by account: Account) async throws {
        guard token.count >= 16, token.count <= 512, token.allSatisfy(\.isHexDigit) else {
            throw TripError.invalid(pointer: "/token", detail: "must be the push token as hex")
        }
        let updated = try await commits.rewrite(order) { trip in
            guard trip.kind == .delivery, trip.customerId == account.id else { return false }
            trip.liveActivityToken = token.lowercased()
            return true
        }
        guard updated != nil else { throw TripError.notFound }
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

extension TripRecord {
    /// The record's price and payment from the quote it was confirmed on and the hold placed for it.
    mutating func apply(_ priced: Quote, payment: TripPayment) {
        apply(priced)
        self.payment = payment
    }

    /// The record's price from the quote it was confirmed on (a trip booked ahead holds the money later).
    mutating func apply(_ priced: Quote) {
        quoteId = priced.id
        quote = priced.price.total
        quotedPrice = priced.price
        demand = priced.demand
    }

    /// Takes the provider fix of `other` (the same trip as held elsewhere) when it is newer and from the same provider:
    /// fixes travel apart from versions.
    mutating func keepNewerFix(of other: TripRecord?) {
        guard let fix = other?.providerFix, other?.providerId == providerId,
            (fix.recordedAt, fix.seq) > (providerFix?.recordedAt ?? .distantPast, providerFix?.seq ?? 0)
        else { return }
        providerFix = fix
    }
}
