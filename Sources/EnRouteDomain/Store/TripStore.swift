public import Foundation

/// One applied change in a trip's log, written in the same transaction as the change.
public struct ChangeLogEntry: Codable, Sendable, Equatable {
    public let tripId: String
    public let version: Int
    public let status: String
    public let actorRole: Party
    public let actorId: String
    /// When the server applied it.
    public let serverTime: Date
    /// When the device says it happened (provider steps).
    public let deviceTime: Date?
    /// The provider's change id, unique per trip.
    public let changeId: String?

    public init(
        tripId: String, version: Int, status: String, actorRole: Party, actorId: String, serverTime: Date,
        deviceTime: Date? = nil, changeId: String? = nil
    ) {
        self.tripId = tripId; self.version = version; self.status = status; self.actorRole = actorRole
        self.actorId = actorId; self.serverTime = serverTime; self.deviceTime = deviceTime; self.changeId = changeId
    }
}

/// An answer remembered for an idempotency key, replayed unchanged.
public struct StoredResponse: Codable, Sendable, Equatable {
    public let status: Int
    public let contentType: String
    public let body: [UInt8]
    public init(status: Int, contentType: String, body: [UInt8]) {
        self.status = status; self.contentType = contentType; self.body = body
    }
}

/// Idempotency keys are scoped to account, method and path.
public struct IdempotencyScope: Sendable, Hashable, Codable {
    public let accountId: String
    public let method: String
    public let path: String
    public let key: String
    public init(accountId: String, method: String, path: String, key: String) {
        self.accountId = accountId; self.method = method; self.path = path; self.key = key
    }
}

/// The stored state of one idempotency key.
public struct IdempotencyRecord: Sendable, Equatable, Codable {
    public let scope: IdempotencyScope
    /// SHA-256 of the request body, hex.
    public let fingerprint: String
    /// nil while the first request is still running.
    public var response: StoredResponse?
    public let createdAt: Date
    public init(scope: IdempotencyScope, fingerprint: String, response: StoredResponse?, createdAt: Date) {
        self.scope = scope; self.fingerprint = fingerprint; self.response = response; self.createdAt = createdAt
    }
}

/// A side effect recorded in the same transaction as the change that caused it (push notifications,
/// Live Activity updates), delivered later by a sender that drains the outbox.
public struct OutboxMessage: Codable, Sendable, Equatable {
    public let id: String
    /// Which sender handles it, e.g. "apns".
    public let topic: String
    public let payload: [UInt8]
    public let createdAt: Date
    public var attempts: Int
    /// Not to be sent before this time (backoff).
    public var notBefore: Date
    /// The city whose relay lease covers it (the live fan-out's versions); nil for the others.
    public var city: String?
    /// Its number in its city's relay order, stamped under the relay lease (`relayOutbox`); nil until then.
    public var sequence: UInt64?

    public init(
        id: String, topic: String, payload: [UInt8], createdAt: Date, attempts: Int = 0, notBefore: Date? = nil,
        city: String? = nil, sequence: UInt64? = nil
    ) {
        self.id = id; self.topic = topic; self.payload = payload; self.createdAt = createdAt
        self.attempts = attempts; self.notBefore = notBefore ?? createdAt; self.city = city; self.sequence = sequence
    }
}

/// Another transaction changed what this one read or wrote, so this one wrote nothing: run it again.
///
/// A store throws it from `update(_:expectedVersion:)` (a version check or a row lock that lost) or from
/// `transaction` at commit (an optimistic check); the caller retries the whole transaction, a bounded number of times.
public struct TripStoreConflict: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was contended, e.g. "trip T1" or "active ride of c1".
    public let subject: String
    public init(_ subject: String) { self.subject = subject }
    public var description: String { "transaction conflict on \(subject)" }
}

/// What a transaction can read and write; everything commits together or not at all.
///
/// Reads see one consistent snapshot (taken when the transaction starts) plus the transaction's own
/// writes. A transaction is used by one task at a time: its body awaits each call before the next.
public protocol TripTransaction {
    func trip(_ id: String) async throws -> TripRecord?
    /// The customer's newest unfinished trip of `kind` asked for now (trips booked ahead are outside the rule it
    /// serves), read inside the transaction (by an index), so that the one-active-ride rule is decided where the insert
    /// happens: the store fails the transaction with `TripStoreConflict` if another one changed that customer's
    /// unfinished trips of `kind` meanwhile.
    func activeTrip(customer: String, kind: TripKind) async throws -> TripRecord?
    func insert(_ trip: TripRecord) async throws
    /// Replaces the trip, which must still be at `expectedVersion` (the version this transaction read) and
    /// not written by another transaction since this one's snapshot; otherwise `TripStoreConflict`.
    func update(_ trip: TripRecord, expectedVersion: Int) async throws
    func append(_ change: ChangeLogEntry) async throws
    /// The log entry written for a provider's change id, if it was applied.
    func change(tripId: String, changeId: String) async throws -> ChangeLogEntry?
    func idempotency(_ scope: IdempotencyScope) async throws -> IdempotencyRecord?
    /// Writes the key's record; another transaction's write of the same key since this one's snapshot is a conflict.
    func save(_ record: IdempotencyRecord) async throws
    func deleteIdempotency(_ scope: IdempotencyScope) async throws
    /// Adds a message to the outbox; it commits with the change. A message whose id is queued already is left as it is.
    func enqueue(_ message: OutboxMessage) async throws
    /// The hold placed for a quote before its trip exists (or since attached to it), if any.
    func paymentAttempt(quoteId: String) async throws -> PaymentAttempt?
    /// Writes a quote's hold record; another transaction's write of it since this one's snapshot is a conflict.
    func save(_ attempt: PaymentAttempt) async throws
    /// Adds one customer's rating of `provider` to the provider's totals.
    func addRating(provider: String, stars: Int) async throws
    /// Appends rows to the ledger (never changed or removed); a row repeating a movement and account already posted is
    /// a conflict.
    func post(_ entries: [LedgerEntry]) async throws
}

/// How many customers rated a provider and the sum of their stars.
public struct RatingTotal: Sendable, Equatable, Codable {
    public var count: Int
    public var sum: Int
    public init(count: Int, sum: Int) { self.count = count; self.sum = sum }
    /// The average, to one decimal.
    public var average: Double { count == 0 ? 0 : (Double(sum) / Double(count) * 10).rounded() / 10 }
}

/// A hold placed for a quote before its trip exists: the create request's first step, attached to the trip by the
/// transaction that inserts it. One per quote, so a repeated request (a new key after a bank challenge) reuses it.
public struct PaymentAttempt: Codable, Sendable, Equatable {
    public let quoteId: String
    public let accountId: String
    public var payment: TripPayment
    /// How many holds this quote has needed (a new one only after the last was refused or released); part of the
    /// gateway's key.
    public var attempt: Int
    /// The trip it paid for, once created.
    public var tripId: String?
    public let createdAt: Date
    public var updatedAt: Date
    public init(
        quoteId: String, accountId: String, payment: TripPayment, attempt: Int = 1, tripId: String? = nil,
        createdAt: Date
    ) {
        self.quoteId = quoteId; self.accountId = accountId; self.payment = payment; self.attempt = attempt;
        self.tripId = tripId
        self.createdAt = createdAt; self.updatedAt = createdAt
    }

    /// The gateway idempotency key of this attempt's hold, persisted (with the attempt) before the call.
    public var holdKey: String { "hold:\(quoteId):\(attempt)" }
}

/// Durable trips, their change log and idempotency keys: in memory, on SQLite or on PostgreSQL, the same contract.
///
/// The transaction contract, which every adapter keeps and the domain relies on:
/// - Several transactions may be in flight at once; a store may also run them one at a time (SQLite
///   has one writer and does), which trivially keeps the contract.
/// - Each sees a snapshot and its own writes; the first to commit a write to a trip or an idempotency key
///   wins, and any other transaction that read that trip or key from an older snapshot and writes it fails
///   with `TripStoreConflict` (snapshot isolation, first committer wins), from the write or at commit.
/// - A transaction that read a customer's unfinished trips (`activeTrip`) fails with `TripStoreConflict`
///   when another one committed a change to that set meanwhile, so two inserts cannot both pass the
///   one-active-ride rule.
/// - A conflict leaves nothing written; the caller runs the whole body again (`TripService` does, a bounded
///   number of times). A body must let `TripStoreConflict` through, never swallow it.
///
/// PostgreSQL maps onto this as `REPEATABLE READ` transactions, `UPDATE … WHERE id = $1 AND version = $2`
/// (no row: conflict), a partial unique index on unfinished rides' `customer_id` (or `SERIALIZABLE`) for the
/// one-active rule, and SQLSTATE 40001, 40P01 and 23505 reported as `TripStoreConflict`.
public protocol TripStore: Sendable {
    /// Runs `body` as one transaction, possibly concurrently with others; commits when it returns, rolls back
    /// when it throws, and throws `TripStoreConflict` when it lost to a concurrent transaction (see above).
    func transaction<T: Sendable>(_ body: @escaping @Sendable (any TripTransaction) async throws -> T) async throws -> T
    /// Reads one trip (safe from any thread).
    func trip(id: String) throws -> TripRecord?
    /// Up to `limit` trips of `query` after `cursor` (from the start when nil), newest first by (created at, id),
    /// read through an index; `next` is set when more rows follow.
    func trips(_ query: TripQuery, after cursor: TripCursor?, limit: Int) throws -> TripPage
    /// Every trip that has not finished (loaded into memory at start).
    func activeTrips() throws -> [TripRecord]
    /// A trip's change log, oldest first.
    func changes(tripId: String) throws -> [ChangeLogEntry]
    /// Forgets every key whose first request had not answered yet: called once at start, when no
    /// request of this store can still be running (the process that held them is gone). Returns how many.
    func releaseUnansweredIdempotency() async throws -> Int
    /// Drops idempotency keys created before `cutoff`.
    func purgeIdempotency(before cutoff: Date) async throws
    /// Up to `limit` outbox messages of `topic` due at `now`, oldest first.
    func dueOutbox(topic: String, now: Date, limit: Int) async throws -> [OutboxMessage]
    /// Takes up to `limit` messages of `topic` due at `now`, oldest first, making each due again only at `until`
    /// (unless completed or rescheduled before): of several nodes draining one outbox, one takes each message, and a
    /// node that dies holding it leaves it to the others once `until` passes.
    func claimOutbox(topic: String, now: Date, until: Date, limit: Int) async throws -> [OutboxMessage]
    /// Removes a delivered (or abandoned) message.
    func completeOutbox(id: String) async throws
    /// Puts a message back for a later attempt.
    func rescheduleOutbox(id: String, attempts: Int, notBefore: Date) async throws
    /// Takes or keeps the lease named `name` for `node` until `until`: true when it is free, ran out by `now`, or is
    /// `node`'s already (then renewed). On a store told to use the database's clock, that clock decides instead of
    /// `now`.
    func claimLease(_ name: String, node: String, until: Date, now: Date) async throws -> Bool
    /// Gives up `node`'s lease `name` (another node may take it at once); what was stamped under it is kept.
    func releaseLease(_ name: String, node: String) async throws
    /// What `node`, holding lease `name` at `now`, is to publish of `topic` for `city`: in one transaction, stamps the
    /// due unstamped messages (oldest first) with the numbers after the last one stamped under that lease, then returns
    /// up to `limit` stamped messages in stamp order. Nil, having stamped nothing, when `node` does not hold the lease.
    func relayOutbox(
        topic: String, city: String, lease name: String, node: String, now: Date, limit: Int
    ) async throws -> [OutboxMessage]?
    /// A trip's ledger rows, in the order posted.
    func ledger(tripId: String) throws -> [LedgerEntry]
    /// An account's ledger rows posted in `from..<to`, in the order posted.
    func ledger(account: String, from: Date, to: Date) throws -> [LedgerEntry]
    /// The sum of every row on `account`.
    func ledgerBalance(account: String) async throws -> Int
    /// Every provider's rating totals (how many customers rated, the sum of their stars).
    func providerRatings() throws -> [String: RatingTotal]
    /// The hold record of a gateway intent (to apply the gateway's callbacks), if any.
    func paymentAttempt(intentId: String) throws -> PaymentAttempt?
    /// Holds placed before `cutoff` whose trip was never created (a request that failed or died between the hold and
    /// the commit).
    func unattachedPaymentAttempts(before cutoff: Date) throws -> [PaymentAttempt]
}
