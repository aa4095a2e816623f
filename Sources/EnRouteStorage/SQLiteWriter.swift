import Foundation
import SQLiteKit
import Synchronization

/// A database's one writer connection and the turns every write to it takes, first come first served, so
/// that stores sharing the file (trips, paths) take turns instead of meeting SQLite's busy lock and its sleeps.
///
/// A turn is either a piece of synchronous work (run on a serial queue) or an async transaction body
/// (run on the caller's task, which holds the turn across its awaits); no thread waits for a turn.
final class SQLiteWriter: @unchecked Sendable {
    /// Touched only by the holder of the turn (or before any work is queued, during migrations).
    let db: SQLiteDatabase
    private let queue: DispatchQueue
    let checkpointer: WALCheckpointer

    private enum Waiter: Sendable {
        case work(@Sendable (SQLiteDatabase) -> Void)
        case task(CheckedContinuation<Void, Never>)
    }

    private struct Turns {
        var busy = false
        var waiting: [Waiter] = []
        var head = 0
    }

    private let turns = Mutex(Turns())

    /// Opens the writer connection to `path`. Its write-ahead log is copied into the database by a checkpointer
    /// of its own once a commit leaves it at `checkpointPages` or more (SQLite's own threshold by default).
    init(path: String, label: String, checkpointPages: Int = 1_000) throws {
        db = try SQLiteDatabase(path: path)
        queue = DispatchQueue(label: label)
        let checkpointer = try WALCheckpointer(path: path, label: "\(label).checkpoint")
        self.checkpointer = checkpointer
        // SQLite's automatic checkpoint runs inside the commit that crosses its threshold, fsync of the database
        // file included, and every turn queued meanwhile waits for it (a trip write behind a path commit did, at
        // the 99th percentile). The checkpointer copies on its own connection while turns go on; only a log that
        // has grown far past the threshold anyway (readers holding it, commits outrunning the copy) is copied here.
        db.onCommit { [unowned db] pages in
            guard pages >= checkpointPages else { return }
            if pages >= checkpointPages * 8 { _ = try? db.checkpoint() } else { checkpointer.request() }
        }
    }

    /// Runs `work` with the connection after every turn asked for before it.
    func async(_ work: @escaping @Sendable (SQLiteDatabase) -> Void) {
        take(.work(work))
    }

    /// Runs `body` with the connection after every turn asked for before it, holding the turn until it returns.
    func withTurn<T>(_ body: (SQLiteDatabase) async throws -> T) async rethrows -> T {
        await withCheckedContinuation { take(.task($0)) }
        defer { handOn() }
        return try await body(db)
    }

    private func take(_ waiter: Waiter) {
        let now = turns.withLock { t in
            if t.busy { t.waiting.append(waiter); return false }
            t.busy = true
            return true
        }
        if now { start(waiter) }
    }

    private func start(_ waiter: Waiter) {
        switch waiter {
        case .work(let work): queue.async { work(self.db); self.handOn() }
        case .task(let continuation): continuation.resume()
        }
    }

    /// Gives the turn to the next waiter, or frees it.
    private func handOn() {
        let next: Waiter? = turns.withLock { t in
            guard t.head < t.waiting.count else {
                t.busy = false
                t.waiting.removeAll(keepingCapacity: true)
                t.head = 0
                return nil
            }
            let next = t.waiting[t.head]
            t.head += 1
            // Under constant demand the queue never empties: drop the served prefix now and then.
            if t.head > 256, t.head * 2 > t.waiting.count {
                t.waiting.removeFirst(t.head)
                t.head = 0
            }
            return next
        }
        if let next { start(next) }
    }
}

/// Copies a database's write-ahead log into the database on a connection and a queue of its own, off the
/// writer's turns: a passive checkpoint, which waits for no reader or writer.
final class WALCheckpointer: @unchecked Sendable {
    /// Touched only on `queue`.
    private let db: SQLiteDatabase
    private let queue: DispatchQueue
    private let requested = Atomic<Bool>(false)

    init(path: String, label: String) throws {
        db = try SQLiteDatabase(path: path)
        queue = DispatchQueue(label: label)
    }

    /// Asks for a checkpoint soon; asks made before it starts are one.
    func request() {
        guard !requested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.async {
            // Cleared first: a commit while this one copies asks for the next.
            self.requested.store(false, ordering: .releasing)
            _ = try? self.db.checkpoint()
        }
    }

    /// Returns once every checkpoint asked for so far has run.
    func settled() async {
        await withCheckedContinuation { done in queue.async { done.resume() } }
    }
}
