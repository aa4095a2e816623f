import Synchronization

/// Fans every change of a trip out at once and in order: to listeners on the committing thread (the
/// API's live streams), and to subscribers as an AsyncStream.
///
/// Each subscriber has its own bounded buffer that keeps the newest records: one that falls behind
/// skips intermediate records (the latest one carries the whole state) rather than growing.
public final class TripEventHub: Sendable {
    private struct Watcher {
        let continuation: AsyncStream<TripRecord>.Continuation
    }
    private let watchers = Mutex<[String: [UInt64: Watcher]]>([:])
    private let listeners = Mutex<[@Sendable ([TripRecord]) -> Void]>([])
    private let nextID = Atomic<UInt64>(0)
    private let bufferSize: Int

    public init(bufferSize: Int = 64) { self.bufferSize = bufferSize }

    /// Records of trip `id` published from now on; ends when the caller stops iterating.
    public func subscribe(_ id: String) -> AsyncStream<TripRecord> {
        let (stream, continuation) = AsyncStream<TripRecord>.makeStream(bufferingPolicy: .bufferingNewest(bufferSize))
        let key = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        watchers.withLock { $0[id, default: [:]][key] = Watcher(continuation: continuation) }
        continuation.onTermination = { [weak self] _ in
            self?.watchers.withLock { all in
                all[id]?[key] = nil
                if all[id]?.isEmpty == true { all[id] = nil }
            }
        }
        return stream
    }

    /// Calls `listener` with every publish (records of one trip, oldest first), on the publisher's
    /// thread, before the streams get them.
    public func onPublish(_ listener: @escaping @Sendable ([TripRecord]) -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    /// Sends successive records of one trip (oldest first) to every listener and every watcher of it.
    public func publish(_ steps: [TripRecord]) {
        guard let id = steps.first?.id else { return }
        for listener in listeners.withLock({ $0 }) { listener(steps) }
        let targets = watchers.withLock { $0[id].map { Array($0.values) } ?? [] }
        for watcher in targets { for trip in steps { watcher.continuation.yield(trip) } }
    }
}
