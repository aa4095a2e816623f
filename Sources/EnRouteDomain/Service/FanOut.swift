public import Foundation
public import EnRouteModels
import Synchronization
public import EnRouteLogging

/// One node's share of the live fan-out between nodes: every trip version committed here reaches the others through the
/// store's outbox and the live bus, every fix kept here goes straight to the bus, and what the others send is applied
/// to this node's cache, watchers and provider streams.
///
/// Nothing committed is lost: a version is enqueued in its own transaction (topic `live`, with its city) and leaves the
/// outbox only once the bus took it, so a bus that is down delays the fan-out and loses nothing. A city's versions are
/// relayed by one node at a time, the one holding the city's relay lease in the store (`relay:<city>`, renewed on each
/// pass, handed over on `stop()`, taken by another node once it runs out). The holder stamps the city's versions with
/// the next numbers of the city's relay order under the lease and publishes them at those ids, which the bus refuses
/// once it holds them: a retry after a lost answer, or a paused holder resuming after another took its lease, publishes
/// nothing twice. A holder the bus refuses gives the lease up for a lease's length, so that a node that reaches the bus
/// relays. A node that commits a version of a city it does not relay says so on the bus (`relayDue`), so the holder
/// relays at once. A receiver keeps a trip's newest version; after the bus was lost, or on a gap in a city's
/// numbers, the reader reloads every unfinished trip from the store, so a watcher resumes with versions that only rise.
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
    private let relayLease: Duration
    private let batch: Int
    private let log: Logger
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let listeners = Mutex<[@Sendable (LiveMessage) -> Void]>([])
    /// Messages shared here, published one after another in the order they were shared (an offer before its
    /// withdrawal, going online before going offline), by one sender task.
    private let outgoing = AsyncStream<BusEnvelope>.makeStream()
    private let tally = Mutex(Counters())
    /// The cities whose relay lease this node held at its last look.
    private let held = Mutex<Set<String>>([])
    /// Cities this node gave up after the bus refused it, and until when it leaves them to the others.
    private let yielded = Mutex<[String: Date]>([:])
    private let stopped = Atomic<Bool>(false)

    /// What this node relayed and applied, for tests and `/metrics`.
    public struct Counters: Sendable, Equatable {
        /// Versions this node put on the bus.
        public var relayed = 0
        /// Versions this node relayed that the bus held already (a retry), completed without a second copy.
        public var duplicates = 0
        public var applied = 0
        public var resyncs = 0
        public var publishFailures = 0
    }

    /// A node `node` of `service` on `bus`, reading and relaying the streams of `cities`; the relay looks at the outbox
    /// every `relayInterval` (and at once after a commit here or a `relayDue` from another node), a city's relay lease
    /// lasts `relayLease` from its last renewal, and a lost bus is tried again after `retryDelay`.
    public init(
        node: String, service: TripService, bus: any LiveBus, cities: [String], clock: any Clock<Duration>,
        relayInterval: Duration = .seconds(1), relayLease: Duration = .seconds(10), retryDelay: Duration = .seconds(1),
        batch: Int = 256, log: Logger
    ) {
        self.node = node; self.service = service; self.bus = bus; self.cities = cities; self.clock = clock
        self.retryDelay = retryDelay; self.relayLease = relayLease; self.batch = batch; self.log = log
        relayLoop = PollLoop(clock: clock, interval: relayInterval)
    }

    public var counters: Counters { tally.withLock { $0 } }

    /// The cities whose relay lease this node held at its last look.
    public var relaying: Set<String> { held.withLock { $0 } }

    /// The name of `city`'s relay lease in the store.
    public static func lease(of city: String) -> String { "relay:\(city)" }

    /// Starts the relay and the reader; `stop()` ends both and hands this node's relay leases over.
    public func start() {
        let loop = relayLoop
        service.onCommit { [weak self] _, trip in
            loop.wake()
            guard let self else { return }
            let city = trip.city ?? Cities.defaultName
            if !self.held.withLock({ $0.contains(city) }) { self.share(.relayDue, city: city) }
        }
        service.onFixes { [weak self] trip, fixes in self?.share(fixes, of: trip) }
        let relay = Task<Void, Never> { [weak self] in await loop.run { [weak self] in await self?.relay() } }
        let reader = Task<Void, Never> { [weak self] in await self?.read() }
        let bus = self.bus, log = self.log, messages = outgoing.stream
        let sender = Task<Void, Never> {
            for await envelope in messages {
                do { try await bus.publish([envelope]) } catch {
                    log.warning("fan-out: a message was not shared: \(error)")
                }
            }
        }
        tasks.withLock { $0 += [relay, reader, sender] }
    }

    public func stop() {
        outgoing.continuation.finish()
        for task in tasks.withLock({ t in
            defer { t.removeAll() }; return t
        }) { task.cancel() }
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let
            leases = held.withLock { h in
                defer { h.removeAll() }; return h
            }, store = service.store, node = self.node
        if !leases.isEmpty {
            Task { for city in leases { try? await store.releaseLease(Self.lease(of: city), node: node) } }
        }
    }

    deinit { stop() }

    // MARK: - Out

    /// One look at the outbox: relays each city whose lease this node holds or can take.
    func relay() async {
        for city in cities where !stopped.load(ordering: .acquiring) { await relay(city) }
    }

    /// Takes or renews `city`'s relay lease, then publishes the city's stamped versions in stamp order and removes each
    /// once the bus has it (or had it already); on a bus failure, keeps them.
    private func relay(_ city: String) async {
        let store = service.store, lease = Self.lease(of: city)
        do {
            let now = service.currentTime()
            if let until = yielded.withLock({ $0[city] }), now < until { return }
            let holds = try await store.claimLease(
                lease, node: node, until: now.addingTimeInterval(Dispatcher.seconds(relayLease)), now: now)
            held.withLock { if holds { $0.insert(city) } else { $0.remove(city) } }
            guard holds else { return }
            while true {
                guard
                    let stamped = try await store.relayOutbox(
                        topic: Self.topic, city: city, lease: lease, node: node,
                        now: service.currentTime(), limit: batch)
                else {
                    held.withLock { _ = $0.remove(city) }  // taken over since the claim above
                    return
                }
                guard !stamped.isEmpty else { return }
                let envelopes = try stamped.map { message in
                    var envelope = try WireCoding.decoder().decode(BusEnvelope.self, from: Data(message.payload))
                    envelope.sequence = message.sequence
                    return envelope
                }
                let refused: Int
                do { refused = try await bus.publish(envelopes) } catch {
                    tally.withLock { $0.publishFailures += 1 }
                    log.warning(
                        Logger.Message(
                            "fan-out: the bus refused \(stamped.count) versions of \(city), kept in the outbox; "
                                + "leaving \(city) to a node that reaches it: \(error)"
                        ))
                    // A node that reaches the store but not the bus would hold the city's fan-out up: it gives the
                    // lease up, and takes it again only after a lease's length, when no other node has.
                    held.withLock { _ = $0.remove(city) }
                    yielded.withLock {
                        $0[city] = service.currentTime().addingTimeInterval(Dispatcher.seconds(relayLease))
                    }
                    try await store.releaseLease(lease, node: node)
                    return
                }
                for message in stamped { try await store.completeOutbox(id: message.id) }
                tally.withLock {
                    $0.relayed += stamped.count - refused; $0.duplicates += refused
                }
                if stamped.count < batch { return }
            }
        } catch {
            log.warning("fan-out: relaying \(city) failed: \(error)")
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
                // The last number seen on each city's stream since subscribing: a lower one is a copy, a jump a gap.
                var last: [String: UInt64] = [:]
                for try await envelope in messages {
                    var gap = false
                    if let sequence = envelope.sequence {
                        if let seen = last[envelope.city] {
                            if sequence <= seen { continue }
                            gap = sequence > seen + 1
                        }
                        last[envelope.city] = sequence
                    }
                    if envelope.origin != node { apply(envelope) }
                    if gap {
                        log.info(
                            "fan-out: \(envelope.city)'s stream skipped to \(envelope.sequence ?? 0); resynchronising")
                        await resync()
                    }
                }
                if Task.isCancelled { return }
            } catch {
                log.warning("fan-out: lost the bus (\(error)); subscribing again in \(retryDelay)")
            }
            do { try await clock.sleep(for: retryDelay) } catch { return }
        }
    }

    private func apply(_ envelope: BusEnvelope) {
        switch envelope.message {
        case .trip(let trip): service.absorb(trip)
        case .fixes(let provider, let fixes): service.recordFixes(fixes, provider: provider, shared: false)
        case .relayDue: relayLoop.wake()
        case .supplyChanged, .providerEvent, .offerEnded: break
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
            log.warning("fan-out: resynchronising from the store failed: \(error)")
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

    init(
        _ base: any TripTransaction, node: String, now: @escaping @Sendable () -> Date,
        sequence: @escaping @Sendable () -> UInt64
    ) {
        self.base = base; self.node = node; self.now = now; self.sequence = sequence
    }

    func share(_ trip: TripRecord) async throws {
        let at = now()
        let city = trip.city ?? Cities.defaultName
        let envelope = BusEnvelope(origin: node, city: city, message: .trip(trip))
        // Oldest first by time, then by version within one instant; unique across restarts and nodes.
        let id =
            "live:\(trip.id):" + String(format: "%012d", trip.version) + ":\(node):"
            + String(format: "%.6f", at.timeIntervalSince1970) + ":\(sequence())"
        try await base.enqueue(
            OutboxMessage(
                id: id, topic: FanOut.topic, payload: Array(try WireCoding.encoder().encode(envelope)),
                createdAt: at, city: city))
    }

    func trip(_ id: String) async throws -> TripRecord? { try await base.trip(id) }
    func activeTrip(customer: String, kind: TripKind) async throws -> TripRecord? {
        try await base.activeTrip(customer: customer, kind: kind)
    }
    func insert(_ trip: TripRecord) async throws { try await base.insert(trip); try await share(trip) }
    func update(_ trip: TripRecord, expectedVersion: Int) async throws {
        try await base.update(trip, expectedVersion: expectedVersion); try await share(trip)
    }
    func append(_ change: ChangeLogEntry) async throws { try await base.append(change) }
    func change(tripId: String, changeId: String) async throws -> ChangeLogEntry? {
        try await base.change(tripId: tripId, changeId: changeId)
    }
    func idempotency(_ scope: IdempotencyScope) async throws -> IdempotencyRecord? { try await base.idempotency(scope) }
    func save(_ record: IdempotencyRecord) async throws { try await base.save(record) }
    func deleteIdempotency(_ scope: IdempotencyScope) async throws { try await base.deleteIdempotency(scope) }
    func enqueue(_ message: OutboxMessage) async throws { try await base.enqueue(message) }
    func paymentAttempt(quoteId: String) async throws -> PaymentAttempt? {
        try await base.paymentAttempt(quoteId: quoteId)
    }
    func save(_ attempt: PaymentAttempt) async throws { try await base.save(attempt) }
    func addRating(provider: String, stars: Int) async throws {
        try await base.addRating(provider: provider, stars: stars)
    }
    func post(_ entries: [LedgerEntry]) async throws { try await base.post(entries) }
}
