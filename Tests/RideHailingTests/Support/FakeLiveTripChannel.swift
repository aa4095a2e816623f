import Synchronization
import Testing
import EnRouteModels
@testable import RideHailing

/// A `LiveTripChannel` whose connections the test drives by hand; connecting fails the test unless allowed.
final class FakeLiveTripChannel: LiveTripChannel {
    typealias Connection = AsyncThrowingStream<TripEvent, any Error>.Continuation

    let log: CallLog
    private let acceptsConnections: Bool
    private let connections = Mutex<[Connection]>([])
    private let closed = Mutex<Set<Int>>([])

    init(log: CallLog = CallLog(), acceptsConnections: Bool) {
        self.log = log
        self.acceptsConnections = acceptsConnections
    }

    var connectionCount: Int { connections.withLock { $0.count } }

    /// The `index`th connection, counting from 0.
    func connection(_ index: Int) -> Connection { connections.withLock { $0[index] } }

    /// True once the consumer stopped listening to the `index`th connection, or it ended.
    func isClosed(_ index: Int) -> Bool { closed.withLock { $0.contains(index) } }

    func events(tripID: String) -> AsyncThrowingStream<TripEvent, any Error> {
        log.record("events(\(tripID))")
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: TripEvent.self)
        guard acceptsConnections else {
            Issue.record("unexpected connection for \(tripID)")
            continuation.finish(throwing: FakeError(reason: "unexpected connection"))
            return stream
        }
        let index = connections.withLock {
            $0.append(continuation); return $0.count - 1
        }
        continuation.onTermination = { [self] _ in closed.withLock { _ = $0.insert(index) } }
        return stream
    }
}
