/// The entries added to some streams, as they arrive: `XREAD BLOCK` in a loop on a connection of its own.
///
/// Each iterator opens its own connection and starts after the ids it was given, then after the last entry it
/// handed out, so a consumer sees every entry once and in stream order. A connection failure ends the iteration
/// by throwing; a consumer that wants to go on starts a new reader after the last id it saw (nothing is lost
/// while the entries are still in the stream). Cancelling the consuming task ends it at once (nil).
public struct RedisStreamReader: AsyncSequence, Sendable {
    public typealias Element = RedisStreamMessage

    private let configuration: RedisConfiguration
    private let streams: [(key: String, after: RedisStreamID)]
    private let block: Duration
    private let batch: Int

    /// A reader of `streams`, each after its id, asking for at most `batch` entries a stream per read and
    /// waiting up to `block` in each (the reader loops, so `block` bounds only how long one read holds the server).
    public init(
        _ configuration: RedisConfiguration, streams: [(key: String, after: RedisStreamID)],
        block: Duration = .seconds(5), batch: Int = 100
    ) {
        self.configuration = configuration
        self.streams = streams
        self.block = block
        self.batch = batch
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(connection: RedisConnection(configuration), positions: streams, block: block, batch: batch)
    }

    /// Reads a batch at a time and hands the entries out one by one.
    public struct Iterator: AsyncIteratorProtocol {
        private let connection: RedisConnection
        private var positions: [(key: String, after: RedisStreamID)]
        private let block: Duration
        private let batch: Int
        private var pending: [RedisStreamMessage] = []
        private var nextIndex = 0

        init(connection: RedisConnection, positions: [(key: String, after: RedisStreamID)], block: Duration, batch: Int)
        {
            self.connection = connection
            self.positions = positions
            self.block = block
            self.batch = batch
        }

        public mutating func next() async throws -> RedisStreamMessage? {
            while nextIndex == pending.count {
                if Task.isCancelled { return nil }
                let read: [RedisStreamMessage]
                do {
                    read = try await connection.xRead(positions, count: batch, block: block)
                } catch is CancellationError {
                    return nil
                }
                for message in read {
                    if let index = positions.firstIndex(where: { $0.key == message.stream }) {
                        positions[index].after = message.entry.id
                    }
                }
                pending = read
                nextIndex = 0
            }
            defer { nextIndex += 1 }
            return pending[nextIndex]
        }
    }
}
