/// Bytes written to a connection that its socket has not taken yet, oldest first.
struct OutboundQueue: Sendable {
    private var bytes: [UInt8] = []
    /// Where the unsent bytes start in `bytes`.
    private var start = 0

    var count: Int { bytes.count - start }
    var isEmpty: Bool { count == 0 }

    mutating func append(_ more: [UInt8]) { bytes.append(contentsOf: more) }

    /// The queue holds `rest` alone.
    mutating func replace(with rest: ArraySlice<UInt8>) {
        bytes = Array(rest)
        start = 0
    }

    /// The first `n` bytes are sent.
    mutating func removeFirst(_ n: Int) {
        start += n
        if start >= bytes.count { removeAll() }
    }

    mutating func removeAll() {
        bytes = []
        start = 0
    }

    /// Calls `body` with the unsent bytes.
    func withUnsentBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
    }
}
