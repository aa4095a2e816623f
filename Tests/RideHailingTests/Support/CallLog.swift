import Synchronization

/// The order in which fakes were called, shared between them.
final class CallLog: Sendable {
    private let entries = Mutex<[String]>([])

    func record(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
    func count(_ prefix: String) -> Int { all.filter { $0.hasPrefix(prefix) }.count }
}

/// Values a fake saw, in order, shared with the test.
final class Recorded<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}
