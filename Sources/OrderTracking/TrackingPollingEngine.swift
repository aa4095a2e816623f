/// While the app is open and an order is active, makes the repository fetch on a timer.
///
/// Foreground and network-back fetch at once; background and offline stop every timer. Each order has
/// at most one poll in flight: a restarted poller waits for the previous one to finish first.
@MainActor
public final class TrackingPollingEngine {
    private let tracking: any TrackingRefresher
    private let lifecycle: any AppLifecycle
    private let network: any NetworkStatus
    private let clock: any Clock<Duration>
    private let cadence: PollingCadence

    private var isRunning = false
    private var isObserving = false
    private var isForeground = false
    private var isOnline = false
    private var known: [OrderID: OrderTracking] = [:]
    private var followed: Set<OrderID> = []
    private var failures: [OrderID: Int] = [:]
    private var pollers: [OrderID: Task<Void, Never>] = [:]
    private var discovery: Task<Void, Never>?

    /// An engine over `tracking`, triggered by `lifecycle` and `network`, timed by `clock` (the order tracker's
    /// `init(tracking:lifecycle:network:)` runs on the continuous clock).
    public init(
        tracking: any TrackingRefresher, lifecycle: any AppLifecycle, network: any NetworkStatus,
        clock: any Clock<Duration> = ContinuousClock(), cadence: PollingCadence = PollingCadence()
    ) {
        self.tracking = tracking
        self.lifecycle = lifecycle
        self.network = network
        self.clock = clock
        self.cadence = cadence
    }

    /// At launch. Triggers: foreground, background, network back, order finished.
    public func start() {
        guard !isRunning else { return }
        isRunning = true
        isForeground = lifecycle.phase == .foreground
        isOnline = network.isOnline
        if !isObserving {
            isObserving = true
            lifecycle.observe { [weak self] phase in self?.phaseChanged(phase) }
            network.observe { [weak self] online in self?.networkChanged(online) }
        }
        fetchNow()
    }

    /// Stops every timer and ignores triggers until `start()`.
    public func stop() {
        isRunning = false
        pause()
    }

    /// Polls `order` even before the active-orders fetch names it (a push tap, a command line).
    public func follow(_ order: OrderID) {
        followed.insert(order)
        if canPoll, known[order]?.status.isTerminal != true { startPoller(order, immediately: true) }
    }

    /// True while the latest poll of some order failed.
    public var isFailing: Bool { failures.values.contains { $0 > 0 } }

    private var canPoll: Bool { isRunning && isForeground && isOnline }

    private func phaseChanged(_ phase: AppPhase) {
        let foreground = phase == .foreground
        guard foreground != isForeground else { return }
        isForeground = foreground
        guard isRunning else { return }
        if foreground { fetchNow() } else { pause() }
    }

    private func networkChanged(_ online: Bool) {
        guard online != isOnline else { return }
        isOnline = online
        guard isRunning else { return }
        if online { fetchNow() } else { pause() }
    }

    private func pause() {
        discovery?.cancel()
        for poller in pollers.values { poller.cancel() }
    }

    private func fetchNow() {
        guard canPoll else { return }
        startDiscovery()
        let orders = Set(known.keys).union(followed).filter { known[$0]?.status.isTerminal != true }
        for order in orders { startPoller(order, immediately: true) }
    }

    private func note(_ snapshot: OrderTracking) {
        if let current = known[snapshot.orderID], current.status.isTerminal || current.version >= snapshot.version {
            return
        }
        known[snapshot.orderID] = snapshot
    }

    private func startDiscovery() {
        let previous = discovery
        previous?.cancel()
        discovery = Task { [weak self, tracking, clock, cadence] in
            await previous?.value
            var failures = 0
            while !Task.isCancelled {
                do {
                    let snapshots = try await tracking.refreshActive()
                    self?.discovered(snapshots)
                    return
                } catch {
                    if Task.isCancelled { return }
                    failures += 1
                    do {
                        try await clock.sleep(for: cadence.delay(afterFailures: failures, error: error), tolerance: nil)
                    } catch { return }
                }
            }
        }
    }

    private func discovered(_ snapshots: [OrderTracking]) {
        for snapshot in snapshots { note(snapshot) }
        for snapshot in snapshots where pollers[snapshot.orderID] == nil && !snapshot.status.isTerminal {
            startPoller(snapshot.orderID, immediately: false)
        }
    }

    private func startPoller(_ order: OrderID, immediately: Bool) {
        let previous = pollers[order]
        previous?.cancel()
        pollers[order] = Task { [weak self] in
            // One poll in flight per order: let a cancelled predecessor finish first.
            await previous?.value
            await self?.pollLoop(order, immediately: immediately)
        }
    }

    private func pollLoop(_ order: OrderID, immediately: Bool) async {
        var wait: Duration
        if immediately {
            wait = .zero
        } else {
            guard let interval = cadence.interval(for: known[order]?.status) else { return }
            wait = interval
        }
        while !Task.isCancelled {
            if wait > .zero {
                do { try await clock.sleep(for: wait, tolerance: nil) } catch { return }
            }
            guard let next = await pollOnce(order) else { return }
            wait = next
        }
    }

    /// Polls once; returns the wait before the next poll, or nil to stop.
    private func pollOnce(_ order: OrderID) async -> Duration? {
        do {
            let snapshot = try await tracking.refresh(order)
            failures[order] = 0
            note(snapshot)
            if Task.isCancelled { return nil }
            return cadence.interval(for: known[order]?.status)
        } catch {
            if Task.isCancelled { return nil }
            let count = failures[order, default: 0] + 1
            failures[order] = count
            return cadence.delay(afterFailures: count, error: error, during: known[order]?.status)
        }
    }
}
