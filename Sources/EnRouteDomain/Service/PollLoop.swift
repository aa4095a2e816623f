public import Foundation
import Synchronization

/// A background loop that does its work, then pauses for `interval` on an injected clock or until `wake()`: the
/// drain loop of an outbox (the push sender, the payment worker). A wake that comes while the work runs is kept, so
/// the next pause ends at once.
public final class PollLoop: Sendable {
    private let clock: any Clock<Duration>
    public let interval: Duration
    private let wakeup = Mutex<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    public init(clock: any Clock<Duration>, interval: Duration) {
        self.clock = clock; self.interval = interval
    }

    /// Runs `work`, then again after `interval` or as soon as `wake()` is called, until the task is cancelled.
    public func run(_ work: @Sendable () async -> Void) async {
        while !Task.isCancelled {
            await work()
            await pause()
        }
    }

    /// Ends the current pause now, or the next one at once when none is under way.
    public func wake() {
        let waiter = wakeup.withLock { w -> CheckedContinuation<Void, Never>? in
            guard let waiter = w.waiter else { w.pending = true; return nil }
            w.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns after `interval` on the clock, on `wake()` (also one that came during the work), or on cancellation.
    private func pause() async {
        let clock = self.clock, interval = self.interval
        let timer = Task { [weak self] in
            // Usually cancelled by a wake long before the interval ends.
            do { try await clock.sleep(for: interval, inStepsOf: longestTimer) } catch { return }
            self?.wake()
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = wakeup.withLock { w -> Bool in
                    if w.pending { w.pending = false; return true }
                    w.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            wake()
        }
    }
}
