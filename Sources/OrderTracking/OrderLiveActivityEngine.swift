public import Foundation

/// Starts the lock-screen card when an order begins, sends its push token, updates it while the app is open,
/// and ends it.
///
/// Every update carries the snapshot's `generatedAt` as its timestamp, the same one the server's pushes use,
/// so whichever writer is older loses.
@MainActor
public final class OrderLiveActivityEngine {
    private let tracking: any LiveActivityTokens
    private let snapshots: any TrackingStream
    private let activities: any ActivityController
    private let lifecycle: any AppLifecycle
    private let staleAfter: TimeInterval

    private var following: Task<Void, Never>?
    /// Open activities and the timestamp they show.
    private var open: [OrderID: Date] = [:]
    private var attempted: Set<OrderID> = []
    private var ended: Set<OrderID> = []
    private var tokenWatchers: [OrderID: Task<Void, Never>] = [:]
    private var uploads: [OrderID: Task<Void, Never>] = [:]

    /// An engine sending tokens to `tracking`, following `snapshots`, driving `activities`.
    public init(
        tracking: any LiveActivityTokens, snapshots: any TrackingStream, activities: any ActivityController,
        lifecycle: any AppLifecycle, staleAfter: TimeInterval = 180
    ) {
        self.tracking = tracking
        self.snapshots = snapshots
        self.activities = activities
        self.lifecycle = lifecycle
        self.staleAfter = staleAfter
    }

    /// At launch: re-attaches to running activities, then follows snapshots.
    public func start() {
        guard following == nil else { return }
        for order in activities.runningActivities() where open[order] == nil {
            open[order] = .distantPast
            attempted.insert(order)
            watchTokens(order)
        }
        let stream = snapshots.snapshots()
        following = Task { [weak self] in
            for await snapshot in stream {
                await self?.handle(snapshot)
            }
        }
    }

    /// Stops following snapshots and tokens; running activities stay for the server to update.
    public func stop() {
        following?.cancel()
        following = nil
        for order in Array(tokenWatchers.keys) { stopTokens(order) }
    }

    func handle(_ snapshot: OrderTracking) async {
        let order = snapshot.orderID
        guard !ended.contains(order) else { return }
        if let shown = open[order] {
            guard snapshot.generatedAt > shown else { return }
            guard activities.runningActivities().contains(order) else {
                // Ended elsewhere (the server's end push, or the user): nothing to do.
                close(order, ended: snapshot.status.isTerminal)
                return
            }
            open[order] = snapshot.generatedAt
            if snapshot.status.isTerminal {
                close(order, ended: true)
                await activities.end(order, content: content(snapshot), timestamp: snapshot.generatedAt)
            } else {
                await activities.update(order, content: content(snapshot), timestamp: snapshot.generatedAt)
            }
            return
        }
        if snapshot.status.isTerminal {
            ended.insert(order)
            return
        }
        guard !attempted.contains(order), lifecycle.phase == .foreground, activities.areActivitiesEnabled else {
            return
        }
        attempted.insert(order)
        do {
            try activities.start(order, content: content(snapshot))
            open[order] = snapshot.generatedAt
            watchTokens(order)
        } catch {
            // The system refused (budget, settings); the app and alert pushes still cover the order.
        }
    }

    private func content(_ snapshot: OrderTracking) -> LiveActivityContent {
        LiveActivityContent(
            status: snapshot.status, eta: snapshot.eta,
            staleDate: snapshot.generatedAt.addingTimeInterval(staleAfter), stopsBefore: snapshot.stopsBefore)
    }

    private func close(_ order: OrderID, ended isEnded: Bool) {
        open[order] = nil
        if isEnded { ended.insert(order) }
        stopTokens(order)
    }

    private func watchTokens(_ order: OrderID) {
        tokenWatchers[order]?.cancel()
        let tokens = activities.pushTokens(for: order)
        tokenWatchers[order] = Task { [weak self] in
            var last: Data?
            for await token in tokens where token != last {
                last = token
                self?.upload(token, for: order)
            }
        }
    }

    private func upload(_ token: Data, for order: OrderID) {
        uploads[order]?.cancel()
        uploads[order] = Task { [tracking] in
            // The repository retries until it lands or the order ends; a newer token cancels this one.
            try? await tracking.send(token, for: order)
        }
    }

    private func stopTokens(_ order: OrderID) {
        tokenWatchers.removeValue(forKey: order)?.cancel()
        uploads.removeValue(forKey: order)?.cancel()
    }
}
