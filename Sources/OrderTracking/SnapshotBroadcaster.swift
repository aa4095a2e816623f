import HTTPTransport

/// Fans snapshots out to every subscriber in arrival order and replays the latest per order on subscribe.
final class SnapshotBroadcaster: Sendable {
    private struct State {
        var latest: [OrderID: OrderTracking] = [:]
        /// Orders by the arrival of their latest snapshot, for an in-order replay.
        var arrival: [OrderID] = []
        var ended: Set<OrderID> = []
        var subscribers: [UInt64: AsyncStream<OrderTracking>.Continuation] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    /// A new stream: the latest snapshot of each order first, then every snapshot as it is published.
    func subscribe() -> AsyncStream<OrderTracking> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: OrderTracking.self, bufferingPolicy: .bufferingNewest(256))
        let id = state.withLock { s -> UInt64 in
            s.nextID += 1; return s.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        state.withLock { s in
            for order in s.arrival {
                if let snapshot = s.latest[order] { continuation.yield(snapshot) }
            }
            s.subscribers[id] = continuation
        }
        return stream
    }

    /// Delivers `snapshot` to every subscriber; yields happen under the lock so all see one order.
    func publish(_ snapshot: OrderTracking) {
        state.withLock { s in
            s.latest[snapshot.orderID] = snapshot
            s.arrival.removeAll { $0 == snapshot.orderID }
            s.arrival.append(snapshot.orderID)
            if snapshot.status.isTerminal { s.ended.insert(snapshot.orderID) }
            for (id, continuation) in s.subscribers {
                if case .terminated = continuation.yield(snapshot) { s.subscribers[id] = nil }
            }
        }
    }

    /// True once any snapshot said the order was delivered or cancelled.
    func hasEnded(_ order: OrderID) -> Bool {
        state.withLock { $0.ended.contains(order) }
    }

    /// How many streams are open, for tests.
    var subscriberCount: Int { state.withLock { $0.subscribers.count } }
}
