import Foundation
public import ClientKit
import HTTPTransport
public import Observation

/// The tracking screen's brain: turns the store's snapshot and the current time into one view state.
///
/// The screen's time moves on every 5 seconds on the injected clock, so "Updated 40 s ago" grows without new data,
/// and also exactly when the freshness policy's wording changes (a pin turning dimmed at 20 s, hidden at 2 min; the
/// ETA turning late or "updating") and whenever the store's snapshot changes, so a pin is never drawn live past 20 s,
/// not even for a fix that arrived already old.
@MainActor @Observable
public final class OrderTrackingViewModel {
    /// The order this screen follows.
    public let order: OrderID
    @ObservationIgnored private let store: OrderTrackingStore
    @ObservationIgnored private let freshness: TrackingFreshnessPolicy
    @ObservationIgnored private let clock: any DateProvider
    @ObservationIgnored private let ticks: any Clock<Duration>
    @ObservationIgnored private let tickInterval: Duration
    @ObservationIgnored private var ticking: Task<Void, Never>?
    private var now: Date
    private var cameraFollows = true

    /// A view model for `order`; `clock` says what time it is, `ticks` paces the re-wording (the order tracker's
    /// `init(order:store:freshness:clock:)` ticks on the continuous clock).
    public init(
        order: OrderID, store: OrderTrackingStore, freshness: TrackingFreshnessPolicy, clock: any DateProvider,
        ticks: any Clock<Duration> = ContinuousClock(), tickInterval: Duration = .seconds(5)
    ) {
        self.order = order
        self.store = store
        self.freshness = freshness
        self.clock = clock
        self.ticks = ticks
        self.tickInterval = tickInterval
        self.now = clock.now()
    }

    /// The one value the screen draws.
    public var viewState: OrderTrackingViewState {
        // `now` is read so that a screen observing this redraws on every tick; the words use the clock's time at
        // the moment of drawing.
        let drawnAt = max(now, clock.now())
        return Self.makeViewState(
            store.state(of: order), lastStep: store.lastStep(of: order), now: drawnAt,
            freshness: freshness, cameraFollows: cameraFollows)
    }

    /// Starts the tick; returns when the calling task is cancelled or `onDisappear()` runs.
    public func onAppear() async {
        ticking?.cancel()
        let task = Task { [weak self, ticks] in
            while !Task.isCancelled {
                guard let self else { return }
                self.now = self.clock.now()
                let wait = self.untilNextChange()
                await Self.pause(for: wait, on: ticks, orUntilChangeOf: self.store, self.order)
            }
        }
        ticking = task
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// The tick interval, or less when the wording changes sooner.
    private func untilNextChange() -> Duration {
        guard case .loaded(let snapshot) = store.state(of: order), !snapshot.status.isTerminal,
            let wait = freshness.untilNextChange(
                fix: snapshot.rider, eta: snapshot.eta, generatedAt: snapshot.generatedAt, now: now)
        else { return tickInterval }
        return min(tickInterval, wait)
    }

    /// Sleeps `wait` on `ticks`, returning early when the store's state of `order` changes or the task is cancelled.
    private static func pause(
        for wait: Duration, on ticks: any Clock<Duration>, orUntilChangeOf store: OrderTrackingStore,
        _ order: OrderID
    ) async {
        let changed = StoreChange()
        withObservationTracking {
            _ = store.state(of: order)
        } onChange: {
            changed.fire()
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await ticks.sleep(for: wait, tolerance: nil) }
            group.addTask { await changed.wait() }
            await group.next()
            group.cancelAll()
        }
        changed.fire()
    }

    /// Stops the tick.
    public func onDisappear() {
        ticking?.cancel()
        ticking = nil
    }

    /// The user panned: the camera stops framing rider and home by itself.
    public func userMovedMap() {
        cameraFollows = false
    }

    static func makeViewState(
        _ state: TrackingState, lastStep: OrderStep?, now: Date, freshness: TrackingFreshnessPolicy,
        cameraFollows: Bool
    ) -> OrderTrackingViewState {
        guard case .loaded(let snapshot) = state else {
            let title = state == .loading ? "Getting your order…" : "Tracking isn't available right now"
            return OrderTrackingViewState(
                title: title, steps: [], eta: "", riderPin: .hidden, banner: nil,
                destination: nil, cameraFollows: cameraFollows)
        }
        let title: String
        let eta: String
        let banner: String?
        let reached = snapshot.status.step ?? lastStep
        var current = reached
        switch snapshot.status {
        case .delivered:
            (title, eta, banner) = ("Delivered", "Delivered", nil)
        case .cancelled(let reason):
            current = nil
            (title, eta, banner) = (
                "Cancelled", "", reason.isEmpty ? "Your order was cancelled" : "Cancelled: \(reason)"
            )
        case .problem(let message):
            title = reached?.title ?? "Your order"
            eta = freshness.text(for: freshness.eta(snapshot.eta, generatedAt: snapshot.generatedAt, now: now))
            banner = message
        case .placed, .picking, .onTheWay, .arriving:
            title = reached?.title ?? ""
            eta = freshness.text(for: freshness.eta(snapshot.eta, generatedAt: snapshot.generatedAt, now: now))
            banner = nil
        }
        let steps = OrderStep.allCases.map { step -> OrderTrackingViewState.StepRow in
            let progress: OrderTrackingViewState.StepRow.Progress
            if let current, step == current {
                progress = .current
            } else if let reached, step <= reached {
                progress = .done
            } else {
                progress = .upcoming
            }
            return .init(step: step, progress: progress)
        }
        let pin = snapshot.status.isTerminal ? RiderPin.hidden : freshness.pin(for: snapshot.rider, now: now)
        // Other orders' stops matter only while this one is still to come.
        let stops = snapshot.status.isTerminal ? nil : ETAWording.stopsBefore(snapshot.stopsBefore)
        return OrderTrackingViewState(
            title: title, steps: steps, eta: eta, riderPin: pin, banner: banner,
            destination: snapshot.destination, cameraFollows: cameraFollows, stopsBefore: stops)
    }
}

/// One store change awaited once: `wait()` returns when `fire()` is called (before or after) or the task is cancelled.
private final class StoreChange: Sendable {
    private enum State { case waiting(CheckedContinuation<Void, Never>?), fired }
    private let state = Locked(State.waiting(nil))

    func fire() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { s in
            defer { s = .fired }
            if case .waiting(let c) = s { return c }
            return nil
        }
        waiter?.resume()
    }

    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if case .fired = s { return true }
                    s = .waiting(c)
                    return false
                }
                if resumeNow { c.resume() }
            }
        } onCancel: {
            fire()
        }
    }
}
