#if canImport(Darwin)
import os
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value guarded by a lock: the client kit's one lock, on every platform `Package.swift` declares.
///
/// `Synchronization.Mutex` needs iOS 18 and macOS 15, above the kit's iOS 17 and macOS 14, so Apple platforms use
/// `OSAllocatedUnfairLock` (iOS 16, macOS 13) and Linux a `pthread_mutex_t` at a stable address. Both take the same
/// closure shape, `withLockUnchecked`'s. The closure runs with the lock held: keep it short, never `await` in it
/// or take the same lock again.
public final class Locked<State>: @unchecked Sendable {
    #if canImport(Darwin)
    private let lock: OSAllocatedUnfairLock<State>
    #else
    private var state: State
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    #endif

    /// A lock guarding `initial`.
    public init(_ initial: State) {
        #if canImport(Darwin)
        lock = OSAllocatedUnfairLock(uncheckedState: initial)
        #else
        state = initial
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        #endif
    }

    #if !canImport(Darwin)
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    #endif

    /// Runs `body` on the guarded value with the lock held and returns what it returns.
    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        #if canImport(Darwin)
        return try lock.withLockUnchecked(body)
        #else
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
        #endif
    }
}
