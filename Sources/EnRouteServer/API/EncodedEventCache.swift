import Synchronization

/// Live-stream event bodies encoded once per trip change and shared by every watcher of the trip,
/// so that a fix fanned out to thousands of streams is encoded once, not once per stream.
final class EncodedEventCache: Sendable {
    private struct Key: Hashable {
        let tripId: String
        let version: Int
        let seq: Int64
        let name: String
    }

    private let entries = Mutex<[Key: [UInt8]]>([:])
    private let limit: Int

    init(limit: Int = 4_096) { self.limit = limit }

    /// The bytes for `name` of trip `tripId` at (`version`, `seq`), encoded by `encode` on first use.
    func bytes(_ name: String, tripId: String, version: Int, seq: Int64, _ encode: () -> [UInt8]?) -> [UInt8]? {
        let key = Key(tripId: tripId, version: version, seq: seq, name: name)
        if let hit = entries.withLock({ $0[key] }) { return hit }
        guard let fresh = encode() else { return nil }
        entries.withLock { all in
            // Old changes are never asked for again once every watcher has moved on; start over when full.
            if all.count >= limit { all.removeAll(keepingCapacity: true) }
            all[key] = fresh
        }
        return fresh
    }
}
