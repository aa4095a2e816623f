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
        // SQLite's automatic checkpoint copies the whole log inside the commit that crosses its threshold, and every
        // turn queued meanwhile waits for it (a trip write behind a path commit did, at the 99th percentile). The
        // checkpointer copies the bulk on its own connection while turns go on; a turn here then copies what was
        // committed meanwhile, so that the log can start over. A log far past the threshold anyway (readers holding
        // it) is copied in the commit, as SQLite would.
        db.onCommit { [unowned self] pages in
            guard pages >= checkpointPages else { return }
            if pages >= checkpointPages * 8 { _ = try? db.checkpoint(); return }
            checkpointer.request { [weak self] done in
                guard let self else { return done() }
                self.async { db in
                    _ = try? db.checkpoint()
                    done()
                }
            }
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

/// Copies a database's write-ahead log into the database on a connection and a queue of its own, beside the
/// writer's turns (a passive checkpoint waits for no reader or writer); what was committed meanwhile is copied
/// by a short turn of the writer's, after which the next commit starts the log over.
final class WALCheckpointer: @unchecked Sendable {
    /// Touched only on `queue`.
    private let db: SQLiteDatabase
    private let queue: DispatchQueue
    private struct State {
        var running = false
        var settled: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    init(path: String, label: String) throws {
        db = try SQLiteDatabase(path: path)
        queue = DispatchQueue(label: label)
    }

    /// Starts a checkpoint unless one is under way. After the copy here, `finish` copies the rest on the writer's
    /// connection and calls its argument when done.
    func request(finish: @escaping @Sendable (_ done: @escaping @Sendable () -> Void) -> Void) {
        let start = state.withLock { s in
            if s.running { return false }
            s.running = true
            return true
        }
        guard start else { return }
        queue.async {
            _ = try? self.db.checkpoint()
            finish {
                let waiting = self.state.withLock { s in
                    s.running = false
                    defer { s.settled = [] }
                    return s.settled
                }
                waiting.forEach { $0.resume() }
            }
        }
    }

    /// Returns once no checkpoint is under way.
    func settled() async {
        await withCheckedContinuation { waiter in
            let now = state.withLock { s in
                if !s.running { return true }
                s.settled.append(waiter)
                return false
            }
            if now { waiter.resume() }
        }
    }
}
