import Foundation
import SQLiteClient
import Synchronization

/// A database's one writer connection and the turns every write to it takes, first come first served, so
/// that stores sharing the file (trips, paths) take turns instead of meeting SQLite's busy lock and its sleeps.
///
/// A turn is either a piece of synchronous work or a transaction (the caller's task, which holds the turn across its
/// awaits), both run on the writer's serial queue; no thread waits for a turn.
///
/// Transactions taken with `transaction(_:)` commit in groups: when the next turn waiting is another such transaction,
/// a finished one leaves SQLite's transaction open and hands the turn on; the last of the group commits for all of
/// them, and only then do their callers go on. Each after the first runs in a savepoint, so one that fails is undone
/// alone. A group writes each page it touches to the log once instead of once per transaction.
final class SQLiteWriter: @unchecked Sendable {
    /// Touched only by the holder of the turn (or before any work is queued, during migrations).
    let db: SQLiteDatabase
    private let queue: DispatchQueue
    /// Runs the jobs of tasks in a transaction on `queue`.
    private let executor: QueueExecutor
    let checkpointer: WALCheckpointer
    /// At most this many transactions commit together.
    let groupLimit: Int

    private enum Waiter: Sendable {
        case work(@Sendable (SQLiteDatabase) -> Void)
        /// A transaction, which may join the group before it.
        case grouped(Ticket)
    }

    /// The open group: touched only by the holder of the turn.
    private struct Group {
        var members = 0
        /// Members that finished and wait for the commit.
        var waiting: [CheckedContinuation<Result<Void, any Error>, Never>] = []
    }
    private var group = Group()
    private let committedGroups = Atomic<Int>(0)

    /// How many groups of transactions have committed since the writer opened.
    var groupsCommitted: Int { committedGroups.load(ordering: .relaxed) }

    private static let writerQueue = DispatchSpecificKey<ObjectIdentifier>()

    /// Whether the caller runs on this writer's queue (where transactions run).
    var onWriterQueue: Bool { DispatchQueue.getSpecific(key: Self.writerQueue) == ObjectIdentifier(queue) }

    /// How many turns wait behind the one under way.
    var queuedTurns: Int { turns.withLock { $0.waiting.count - $0.head } }

    private struct Turns {
        var busy = false
        var waiting: [Waiter] = []
        var head = 0
    }

    private let turns = Mutex(Turns())

    /// Opens the writer connection to `path`. Its write-ahead log is copied into the database by a checkpointer
    /// of its own once a commit leaves it at `checkpointPages` or more (SQLite's own threshold by default).
    init(path: String, label: String, checkpointPages: Int = 1_000, groupLimit: Int = 32) throws {
        db = try SQLiteDatabase(path: path)
        self.groupLimit = max(1, groupLimit)
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.writerQueue, value: ObjectIdentifier(queue))
        executor = QueueExecutor(queue)
        let checkpointer = try WALCheckpointer(path: path, label: "\(label).checkpoint")
        self.checkpointer = checkpointer
        // SQLite's automatic checkpoint copies the whole log inside the commit that crosses its threshold, and every
        // turn queued meanwhile waits for it (a trip write behind a path commit did, at the 99th percentile). The
        // checkpointer copies the bulk on its own connection while turns go on; a turn here then copies what was
        // committed meanwhile, so that the log can start over. That turn syncs the log and the database, and under a
        // steady stream of commits every write waits behind it, so it comes only once the log is `restartFactor` times
        // the threshold; until then the checkpointer copies on by itself. A log far past the threshold anyway (readers
        // holding it) is copied in the commit, as SQLite would.
        db.onCommit { [unowned self] pages in
            guard pages >= checkpointPages else { return }
            if pages >= checkpointPages * 8 { _ = try? db.checkpoint(); return }
            checkpoint(restart: pages >= checkpointPages * Self.restartFactor)
        }
    }

    private let restartTurns = Atomic<Int>(0)

    /// How many of the writer's turns have copied the rest of the log so that it could start over.
    var restartStepsTaken: Int { restartTurns.load(ordering: .relaxed) }

    /// How many times the checkpoint threshold the log may grow to before the writer's own step lets it start over.
    static let restartFactor = 4

    /// Copies the write-ahead log into the database, unless a checkpoint is under way: the checkpointer's passes, then,
    /// with `restart`, the writer's turn that copies the rest so that the next commit starts the log over.
    func checkpoint(restart: Bool = true) {
        checkpointer.request(syncing: restart) { [weak self] done in
            guard restart, let self else { return done() }
            self.async { db in
                _ = try? db.checkpoint()
                self.restartTurns.add(1, ordering: .relaxed)
                done()
            }
        }
    }

    /// Runs `work` with the connection after every turn asked for before it.
    func async(_ work: @escaping @Sendable (SQLiteDatabase) -> Void) {
        take(.work(work))
    }

    /// Runs `body` as one transaction with the connection after every turn asked for before it, committed with the
    /// transactions that directly follow it (see the type's doc); returns once it is committed, or throws what `body`
    /// threw (undoing only its own writes) or why the commit failed.
    func transaction<T>(_ body: (SQLiteDatabase) async throws -> T) async throws -> T {
        // The place in line is taken here and now, before the move to the writer's queue (which may be busy with a
        // path commit); the body and the hand-over then run on that queue, so the next transaction's turn starts there
        // as soon as this one lets go, instead of waiting for a thread of Swift's pool to wake up and take it.
        let ticket = Ticket()
        take(.grouped(ticket))
        return try await withTaskExecutorPreference(executor) {
            await ticket.granted()
            return try await inTurn(body)
        }
    }

    /// The transaction once its turn has come.
    private func inTurn<T>(_ body: (SQLiteDatabase) async throws -> T) async throws -> T {
        let first = group.members == 0
        do {
            try db.execute(first ? "BEGIN IMMEDIATE" : "SAVEPOINT member")
        } catch {
            // Nothing of this one was written; a group before it is still whole and commits without it.
            if first { handOn() } else { closeGroup(lost: nil) }
            throw error
        }
        let outcome: Result<T, any Error>
        do {
            let value = try await body(db)
            if !first { try db.execute("RELEASE member") }
            outcome = .success(value)
        } catch {
            outcome = .failure(error)
        }
        group.members += 1
        if case .failure(let error) = outcome {
            if first {
                if db.inTransaction { try? db.execute("ROLLBACK") }
                group = Group()
                handOn()
                throw error
            }
            // Undo this one alone; when SQLite has rolled the whole transaction back by itself, the group is lost.
            let undone =
                (try? db.execute("ROLLBACK TO member")) != nil && (try? db.execute("RELEASE member")) != nil
                && db.inTransaction
            guard undone else { closeGroup(lost: error); throw error }
            // Nothing of this one is left to commit: the group goes on, or commits, without waiting for it.
            if group.members < groupLimit, let next = nextGrouped() { start(next) } else { closeGroup(lost: nil) }
            throw error
        }
        if group.members < groupLimit, let next = nextGrouped() {
            let committed = await withCheckedContinuation { waiter in
                group.waiting.append(waiter)
                start(next)
            }
            try committed.get()
        } else {
            try closeGroup(lost: nil).get()
        }
        return try outcome.get()
    }

    /// Commits the open group (rolls it back instead when `lost` says a member's failure took it down), tells the
    /// members waiting for it, and hands the turn on; what they were told.
    @discardableResult
    private func closeGroup(lost: (any Error)?) -> Result<Void, any Error> {
        let outcome: Result<Void, any Error> =
            if let lost {
                .failure(
                    SQLiteError(
                        code: 4 /* SQLITE_ABORT */,
                        message: "a transaction committed together with this one failed, and took it down: \(lost)"))
            } else {
                Result {
                    try db.execute("COMMIT")
                    committedGroups.add(1, ordering: .relaxed)
                }
            }
        if db.inTransaction { try? db.execute("ROLLBACK") }
        let waiting = group.waiting
        group = Group()
        handOn()
        waiting.forEach { $0.resume(returning: outcome) }
        return outcome
    }

    /// The next waiter, taken off the line, when it is a transaction that may join the open group.
    private func nextGrouped() -> Waiter? {
        turns.withLock { t in
            guard t.head < t.waiting.count, case .grouped = t.waiting[t.head] else { return nil }
            defer { t.head += 1 }
            return t.waiting[t.head]
        }
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
        case .work(let work):
            queue.async {
                work(self.db); self.handOn()
            }
        case .grouped(let ticket): ticket.grant()
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

/// A transaction's place in the writer's line: granted once, waited for once, in either order.
final class Ticket: Sendable {
    private struct State {
        var isGranted = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    /// The turn is this ticket's: its waiter goes on, or will not wait.
    func grant() {
        let waiter = state.withLock { s in
            s.isGranted = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Returns once the ticket is granted.
    func granted() async {
        await withCheckedContinuation { waiter in
            let now = state.withLock { s in
                if s.isGranted { return true }
                s.waiter = waiter
                return false
            }
            if now { waiter.resume() }
        }
    }
}

/// A task executor that runs jobs on a serial dispatch queue.
final class QueueExecutor: TaskExecutor, Sendable {
    private let queue: DispatchQueue

    init(_ queue: DispatchQueue) { self.queue = queue }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
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

    /// Starts a checkpoint unless one is under way. After the copy here (and, `syncing`, a sync of the log), `finish`
    /// may copy the rest on the writer's connection, and calls its argument when done.
    func request(syncing: Bool, finish: @escaping @Sendable (_ done: @escaping @Sendable () -> Void) -> Void) {
        let start = state.withLock { s in
            if s.running { return false }
            s.running = true
            return true
        }
        guard start else { return }
        queue.async {
            self.copyUntilLittleIsLeft()
            // The writer's step syncs the log before it copies: what was written since is synced here, beside it.
            if syncing { self.db.syncLog() }
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

    /// Passive checkpoints, each copying what was committed during the one before, until at most `residualPages`
    /// are left for the writer's own step (whose turn every write waits behind) or a pass no longer gains on the
    /// writer; at most `maxPasses`. Returns the passes made and the pages left in the log (nil when a pass failed).
    /// Runs on the checkpointer's queue.
    @discardableResult
    func copyUntilLittleIsLeft() -> (passes: Int, left: Int?) {
        var left = Int.max
        for pass in 1...Self.maxPasses {
            guard let (log, copied) = try? db.checkpoint() else { return (pass, nil) }
            let now = log - copied
            if now <= Self.residualPages || now >= left { return (pass, now) }
            left = now
        }
        return (Self.maxPasses, left)
    }

    /// Pages the writer's step may be left to copy.
    static let residualPages = 32
    /// Passes of the checkpointer at most before the writer's step.
    static let maxPasses = 8

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
