import Synchronization

/// Names each request for the log: the client's `X-Request-Id` when it is a plain token (1 to 128 visible ASCII
/// characters), so a caller's id follows its request through the server, and otherwise the next of the server's own.
/// The id is answered in `X-Request-Id` and carried by every log line the request's handler writes.
public struct RequestIDs: Sendable {
    private let next: @Sendable () -> String

    /// Ids from `next` for requests that bring none.
    public init(_ next: @escaping @Sendable () -> String) { self.next = next }

    /// `prefix-1`, `prefix-2`, …: unique within a process whose `prefix` is unique.
    public static func counting(prefix: String) -> RequestIDs {
        let counter = Atomic<UInt64>(0)
        return RequestIDs { "\(prefix)-\(counter.wrappingAdd(1, ordering: .relaxed).newValue)" }
    }

    /// The id of a request that sent `given` in `X-Request-Id` (nil: none).
    public func id(given: String?) -> String {
        if let given, Self.accepts(given) { return given }
        return next()
    }

    /// Whether a client's id is kept: 1 to 128 visible ASCII characters, nothing a log line would need to escape.
    public static func accepts(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count)
            && id.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    }
}
