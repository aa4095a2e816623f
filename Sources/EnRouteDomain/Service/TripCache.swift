public import Foundation
public import EnRouteModels
import Synchronization

/// The trips in memory: every active trip, and the most recently ended ones up to a limit, indexed by customer and
/// provider. Reads are served from here; a miss reads the store once and keeps what it read.
///
/// A version only replaces an older one (`remember`): concurrent commits of one trip can arrive out of order, and a
/// reader never sees a version go back.
public final class TripCache: Sendable {
    /// A trip in memory behind one reference: a read takes that reference instead of copying every field.
    final class Held: Sendable {
        let record: TripRecord
        init(_ record: TripRecord) { self.record = record }
    }

    /// The cached trips by id; reads and writes see plain records, `held` hands out the reference.
    struct Shelf {
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

    /// Everything the lock guards.
    struct State {
        var trips = Shelf()
        var activeByCustomer: [String: Set<String>] = [:]
        var activeByProvider: [String: Set<String>] = [:]
        /// Rides waiting for a provider (the demand side of the busy-time multiplier).
        var searching: Set<String> = []
        /// Per active cached trip, the ETA the store holds and when the trip was last written (fixes move
        /// the cached ETA without writing).
        var stored: [String: (eta: Date?, at: Date)] = [:]
        /// Ended trips still in `trips`, oldest first: a short memory for the reads that follow an end,
        /// bounded by `endedLimit`; older ones are read from the store.
        var ended: [String] = []
        var endedHead = 0
    }

    /// Where a miss is read.
    public let store: any TripStore
    /// How many ended trips stay in memory for the reads that follow their end; memory holds every
    /// active trip and at most this many ended ones, however many trips have run.
    public let endedLimit: Int
    private let state = Mutex(State())

    /// A cache over `store` keeping at most `endedLimit` ended trips.
    public init(store: any TripStore, endedLimit: Int) {
        self.store = store
        self.endedLimit = max(0, endedLimit)
    }

    /// How many trips memory holds now.
    public var count: Int { state.withLock { $0.trips.count } }

    /// Runs `body` under the cache's lock (for a change that reads and writes several trips at once).
    func withState<R>(_ body: (inout State) throws -> R) rethrows -> R {
        try state.withLock { try body(&$0) }
    }

    // MARK: - Reads

    /// The trip by id regardless of who asks (for the service's own use); a miss reads the store.
    public func cached(_ id: String) throws -> TripRecord? {
        if let hit = state.withLock({ $0.trips.held(id) }) { return hit.record }
        guard let stored = try store.trip(id: id) else { return nil }
        remember(stored)
        return stored
    }

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
        if let hit = state.withLock({ $0.trips.held(id) }) {
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

    /// The trip in memory, without reading the store.
    public func inMemory(_ id: String) -> TripRecord? { state.withLock { $0.trips[id] } }

    /// The customer's unfinished trips, newest first.
    public func activeTrips(customer: String) -> [TripRecord] {
        state.withLock { c in (c.activeByCustomer[customer] ?? []).compactMap { c.trips[$0] } }.sorted(by: Self.newest)
    }

    /// The provider's unfinished trips, newest first.
    public func activeTrips(provider: String) -> [TripRecord] {
        state.withLock { c in (c.activeByProvider[provider] ?? []).compactMap { c.trips[$0] } }.sorted(by: Self.newest)
    }

    /// Every unfinished trip, newest first (all are in memory): the ops console's live city.
    public func activeTrips() -> [TripRecord] {
        state.withLock { c in c.trips.filter { $0.status.isActive } }.sorted(by: Self.newest)
    }

    /// Trips in memory whose payment is still a hold placed before `cutoff`.
    public func heldTrips(placedBefore cutoff: Date) -> [TripRecord] {
        state.withLock { c in c.trips.filter { $0.payment?.state == .held && $0.createdAt < cutoff } }
    }

    /// The pickups of the rides waiting for a provider.
    public func openPickups() -> [Coordinate] {
        state.withLock { c in c.searching.compactMap { c.trips[$0]?.pickup } }
    }

    /// True when the provider has no unfinished trip.
    public func isIdle(provider: String) -> Bool {
        state.withLock { $0.activeByProvider[provider]?.isEmpty ?? true }
    }

    private static func newest(_ a: TripRecord, _ b: TripRecord) -> Bool { (a.createdAt, a.id) > (b.createdAt, b.id) }

    // MARK: - Writes

    /// Keeps `trip` in memory unless a newer version is there already; says whether it kept it.
    @discardableResult
    public func remember(_ trip: TripRecord) -> Bool {
        let limit = endedLimit
        return state.withLock { Self.remember(trip, in: &$0, endedLimit: limit) }
    }

    /// Keeps every trip of `trips` (loading the active trips at start).
    public func remember(_ trips: [TripRecord]) {
        let limit = endedLimit
        state.withLock { c in for trip in trips { Self.remember(trip, in: &c, endedLimit: limit) } }
    }

    @discardableResult
    static func remember(_ trip: TripRecord, in c: inout State, endedLimit: Int) -> Bool {
        if let old = c.trips[trip.id], old.version > trip.version { return false }
        let wasKnownEnded = c.trips[trip.id].map { !$0.status.isActive } ?? false
        if let old = c.trips[trip.id], let provider = old.providerId,
            provider != trip.providerId || !trip.status.isActive
        {
            forget(provider, trip.id, in: &c.activeByProvider)
        }
        c.trips[trip.id] = trip
        if trip.status == .ride(.searching), !trip.isBookedAhead {
            c.searching.insert(trip.id)
        } else {
            c.searching.remove(trip.id)
        }
        c.stored[trip.id] = trip.status.isActive ? (trip.etaLatest, trip.updatedAt) : nil
        if trip.status.isActive {
            c.activeByCustomer[trip.customerId, default: []].insert(trip.id)
            if let provider = trip.providerId { c.activeByProvider[provider, default: []].insert(trip.id) }
        } else {
            forget(trip.customerId, trip.id, in: &c.activeByCustomer)
            if let provider = trip.providerId { forget(provider, trip.id, in: &c.activeByProvider) }
            if !wasKnownEnded { c.ended.append(trip.id) }
            dropOldestEnded(in: &c, beyond: endedLimit)
        }
        return true
    }

    /// Keeps at most `limit` ended trips; the oldest go first (an active one is never dropped).
    private static func dropOldestEnded(in c: inout State, beyond limit: Int) {
        while c.ended.count - c.endedHead > limit {
            let oldest = c.ended[c.endedHead]
            c.endedHead += 1
            if let kept = c.trips[oldest], !kept.status.isActive { c.trips[oldest] = nil }
        }
        if c.endedHead > 1024, c.endedHead * 2 > c.ended.count {
            c.ended.removeFirst(c.endedHead)
            c.endedHead = 0
        }
    }

    /// Removes `tripId` from `owner`'s set, and the set itself once empty, so that accounts that come
    /// and go leave nothing behind.
    private static func forget(_ owner: String, _ tripId: String, in index: inout [String: Set<String>]) {
        guard var set = index[owner] else { return }
        set.remove(tripId)
        index[owner] = set.isEmpty ? nil : set
    }
}
