import Dispatch
import Synchronization

/// Runs long synchronous work (building a road network, contracting a graph) on one serial Dispatch queue
/// and awaits it, so that it never holds one of the few threads Swift concurrency's cooperative pool has,
/// and so that at most one such job takes a core at a time: while it runs, the other tests' tasks and
/// in-process servers keep being scheduled.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        heavyWork.async {
            continuation.resume(with: Result { try work() })
        }
    }
}

/// The one queue long test computations take turns on.
private let heavyWork = DispatchQueue(label: "TestSupport.offThePool", qos: .utility)

/// Computes each key's value once, off the cooperative pool, for every test that asks; waiting callers suspend
/// instead of blocking a thread (a `static let` built lazily would block each caller's thread until it is done).
public final class SharedFixture<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let tasks = Mutex<[Key: Task<Value, any Error>]>([:])
    private let make: @Sendable (Key) throws -> Value

    /// A fixture whose value for a key is `make(key)`.
    public init(_ make: @escaping @Sendable (Key) throws -> Value) { self.make = make }

    /// The value for `key`, computed on first request.
    public func value(_ key: Key) async throws -> Value {
        let make = self.make
        let task = tasks.withLock { tasks in
            if let running = tasks[key] { return running }
            let started = Task { try await offThePool { try make(key) } }
            tasks[key] = started
            return started
        }
        return try await task.value
    }
}
