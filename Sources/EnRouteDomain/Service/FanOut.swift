public import Foundation
public import EnRouteModels
import Synchronization

/// One node's share of the live fan-out between nodes (issue 14): every trip version committed here reaches the
/// others through the store's outbox and the live bus, every fix kept here goes straight to the bus, and what the
/// others send is applied to this node's cache, watchers and provider streams.
///
/// Nothing committed is lost: a version is enqueued in its own transaction (topic `live`) and leaves the outbox only
/// once the bus took it, so a bus that is down delays the fan-out and loses nothing. A receiver keeps a trip's newest
/// version, so a version relayed twice (two relays, a retry after a lost answer) is applied once. After the bus was
/// lost, the reader subscribes again and then reloads every unfinished trip from the store, so a watcher resumes with
/// versions that only rise.
public final class FanOut: PeerChannel, Sendable {
    /// The outbox topic of trip versions waiting for the bus.
    public static let topic = "live"

    public let node: String
    private let service: TripService
    private let bus: any LiveBus
    private let cities: [String]
    private let clock: any Clock<Duration>
    private let relayLoop: PollLoop
    private let retryDelay: Duration
    private let batch: Int
    private let log: @Sendable (String) -> Void
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let listeners = Mutex<[@Sendable (LiveMessage) -> Void]>([])
    /// Messages shared here, published one after another in the order they were shared (an offer before its
    /// withdrawal, going online before going offline), by one sender task.
    private let outgoing = AsyncStream<BusEnvelope>.makeStream()
    private let tally = Mutex(Counters())

    /// What this node relayed and applied, for tests and `/metrics`.
    public struct Counters: Sendable, Equatable {
        public var relayed = 0
        public var applied = 0
        public var resyncs = 0
        public var publishFailures = 0
    }

    /// A node `node` of `service` on `bus`, reading the streams of `cities`; the relay looks at the outbox every
    /// `relayInterval` (and at once after each local commit), and a lost bus is tried again after `retryDelay`.
    public init(node: String, service: TripService, bus: any LiveBus, cities: [String], clock: any Clock<Duration>,
                relayInterval: Duration = .seconds(1), retryDelay: Duration = .seconds(1), batch: Int = 256,
                log: @escaping @Sendable (String) -> Void) {
        self.node = node; self.service = service; self.bus = bus; self.cities = cities; self.clock = clock
        self.retryDelay = retryDelay; self.batch = batch; self.log = log
        relayLoop = PollLoop(clock: clock, interval: relayInterval)
    }

    public var counters: Counters { tally.withLock { $0 } }

    /// Starts the relay and the reader; `stop()` ends both.
    public func start() {
        let loop = relayLoop
        service.onCommit { _, _ in loop.wake() }
        service.onFixes { [weak self] trip, fixes in self?.share(fixes, of: trip) }
        let relay = Task<Void, Never> { [weak self] in await loop.run { [weak self] in await self?.relay() } }
        let reader = Task<Void, Never> { [weak self] in await self?.read() }
        let bus = self.bus, log = self.log, messages = outgoing.stream
        let sender = Task<Void, Never> {
            for await envelope in messages {
                do { try await bus.publish([envelope]) } catch { log("fan-out: a message was not shared: \(error)") }
            }
        }
        tasks.withLock { $0 += [relay, reader, sender] }
    }

    public func stop() {
        outgoing.continuation.finish()
        for task in tasks.withLock({ t in defer { t.removeAll() }; return t }) { task.cancel() }
    }

    deinit { stop() }

    // MARK: - Out

    /// Publishes the due outbox versions in order and removes each once the bus has it; on a bus failure, keeps them.
    func relay() async {
        let store = service.store
        do {
            while true {
                let due = try await store.dueOutbox(topic: Self.topic, now: service.currentTime(), limit: batch)
                guard !due.isEmpty else { return }
                let envelopes = try due.map { try WireCoding.decoder().decode(BusEnvelope.self, from: Data($0.payload)) }
                do { try await bus.publish(envelopes) } catch {
                    tally.withLock { $0.publishFailures += 1 }
                    log("fan-out: the bus refused \(due.count) versions, kept in the outbox: \(error)")
                    return
                }
                for message in due { try await store.completeOutbox(id: message.id) }
                tally.withLock { $0.relayed += due.count }
                if due.count < batch { return }
            }
        } catch {
            log("fan-out: reading the outbox failed: \(error)")
        }
    }

    /// Sends fixes kept here to the other nodes at once (fixes are not versions: a lost one is superseded by the next).
    private func share(_ fixes: [LocationFix], of trip: TripRecord) {
        guard let provider = trip.providerId, !fixes.isEmpty else { return }
        share(.fixes(provider: provider, fixes: fixes), city: trip.city ?? Cities.defaultName)
    }

    public func share(_ message: LiveMessage, city: String) {
        outgoing.continuation.yield(BusEnvelope(origin: node, city: city, message: message))
    }

    /// Calls `listener` with every message another node sends, after this node's cache and watchers took it.
    public func onMessage(_ listener: @escaping @Sendable (LiveMessage) -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    // MARK: - In

    /// Applies what the other nodes send until cancelled; after a lost bus, subscribes again and resynchronises.
    private func read() async {
        var first = true
        while !Task.isCancelled {
            let messages = bus.subscribe(cities: cities)
            // Subscribed first, then reloaded: nothing committed between the two is missed.
            if !first { await resync() }
            first = false
            do {
                for try await envelope in messages where envelope.origin != node { apply(envelope) }
                if Task.isCancelled { return }
            } catch {
                log("fan-out: lost the bus (\(error)); subscribing again in \(retryDelay)")
            }
            do { try await clock.sleep(for: retryDelay) } catch { return }
        }
    }

    private func apply(_ envelope: BusEnvelope) {
        switch envelope.message {
        case .trip(let trip): service.absorb(trip)
        case .fixes(let provider, let fixes): service.recordFixes(fixes, provider: provider, shared: false)
        case .presence, .providerEvent, .offerEnded: break
        }
        for listener in listeners.withLock({ $0 }) { listener(envelope.message) }
        tally.withLock { $0.applied += 1 }
    }

    /// Reloads every unfinished trip, and every one this node holds, from the store and keeps what is newer.
    func resync() async {
        tally.withLock { $0.resyncs += 1 }
        do {
            var ids = Set(service.activeTrips().map(\.id))
            for trip in try service.store.activeTrips() {
                ids.remove(trip.id)
                service.absorb(trip)
            }
            // Held here as active but finished meanwhile elsewhere.
            for id in ids { if let trip = try service.store.trip(id: id) { service.absorb(trip) } }
        } catch {
            log("fan-out: resynchronising from the store failed: \(error)")
        }
    }
}

/// A transaction of a node of several: every trip it inserts or updates is also queued in the outbox for the other
/// nodes (topic `live`), so the version and its fan-out commit together or not at all.
struct SharingTransaction: TripTransaction {
    let base: any TripTransaction
    let node: String
    let now: @Sendable () -> Date
    /// A number this process has not given before, so that two writes of one version in one instant are two messages.
    let sequence: @Sendable () -> UInt64

    init(_ base: any TripTransaction, node: String, now: @escaping @Sendable () -> Date, sequence: @escaping @Sendable () -> UInt64) {
        self.base = base; self.node = node; self.now = now; self.sequence = sequence
    }

    func share(_ trip: TripRecord) async throws {
        let at = now()
        let envelope = BusEnvelope(origin: node, city: trip.city ?? Cities.defaultName, message: .trip(trip))
        // Oldest first by time, then by version within one instant; unique across restarts and nodes.
        let id = "live:\(trip.id):" + String(format: "%012d", trip.version) + ":\(node):" + String(format: "%.6f", at.timeIntervalSince1970) + ":\(sequence())"
        try await base.enqueue(OutboxMessage(id: id, topic: FanOut.topic, payload: Array(try WireCoding.encoder().encode(envelope)), createdAt: at))
    }

    func trip(_ id: String) async throws -> TripRecord? { try await base.trip(id) }
    func activeTrip(customer: String, kind: TripKind) async throws -> TripRecord? { try await base.activeTrip(customer: customer, kind: kind) }
    func insert(_ trip: TripRecord) async throws { try await base.insert(trip); try await share(trip) }
    func update(_ trip: TripRecord, expectedVersion: Int) async throws { try await base.update(trip, expectedVersion: expectedVersion); try await share(trip) }
    func append(_ change: ChangeLogEntry) async throws { try await base.append(change) }
    func change(tripId: String, changeId: String) async throws -> ChangeLogEntry? { try await base.change(tripId: tripId, changeId: changeId) }
    func idempotency(_ scope: IdempotencyScope) async throws -> IdempotencyRecord? { try await base.idempotency(scope) }
    func save(_ record: IdempotencyRecord) async throws { try await base.save(record) }
    func deleteIdempotency(_ scope: IdempotencyScope) async throws { try await base.deleteIdempotency(scope) }
    func enqueue(_ message: OutboxMessage) async throws { try await base.enqueue(message) }
    func paymentAttempt(quoteId: String) async throws -> PaymentAttempt? { try await base.paymentAttempt(quoteId: quoteId) }
    func save(_ attempt: PaymentAttempt) async throws { try await base.save(attempt) }
    func addRating(provider: String, stars: Int) async throws { try await base.addRating(provider: provider, stars: stars) }
    func post(_ entries: [LedgerEntry]) async throws { try await base.post(entries) }
}
