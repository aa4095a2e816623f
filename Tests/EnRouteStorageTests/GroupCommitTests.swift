import Foundation
import Synchronization
import Testing
import SQLiteClient
import TestSupport
@testable import EnRouteSQLite

/// Transactions that queue up behind each other on the writer commit together, each undone alone when it fails, and
/// none of their callers goes on before the commit.
@Suite struct GroupCommitTests {
    struct Refused: Error {}

    /// What ran, in order.
    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    /// A writer over a fresh database with one table of named rows, in a temporary folder the caller removes.
    static func writer(groupLimit: Int = 32) throws -> (SQLiteWriter, path: String, dir: URL) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("group-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("db.sqlite").path
        let writer = try SQLiteWriter(path: path, label: "test.writer", groupLimit: groupLimit)
        try writer.db.execute("CREATE TABLE rows (name TEXT PRIMARY KEY)")
        return (writer, path, dir)
    }

    static func insert(_ name: String, _ db: SQLiteDatabase) throws {
        try db.run("INSERT INTO rows (name) VALUES (?1)", [.text(name)])
    }

    /// The rows committed, as a connection of its own reads them.
    static func committed(_ path: String) throws -> [String] {
        try SQLiteDatabase(path: path, readOnly: true).query("SELECT name FROM rows ORDER BY name") { $0.text(0) ?? "" }
    }

    /// Starts a transaction that writes `first` and then holds the writer until `gate` opens; returns once it holds it.
    static func hold(_ writer: SQLiteWriter, _ gate: Gate, writing first: String) async throws -> Task<Void, any Error>
    {
        let holding = Atomic(false)
        let task = Task {
            try await writer.transaction { db in
                try insert(first, db)
                holding.store(true, ordering: .relaxed)
                await gate.wait()
            }
        }
        try await eventually("the first transaction holds the writer") { holding.load(ordering: .relaxed) }
        return task
    }

    /// Queues transactions behind the one under way, in order, each writing its name (one named "refused" throws after
    /// writing); returns once all of them wait for their turn.
    static func queue(_ writer: SQLiteWriter, _ names: [String]) async throws -> [Task<Void, any Error>] {
        var tasks: [Task<Void, any Error>] = []
        for name in names {
            let queued = writer.queuedTurns
            tasks.append(
                Task {
                    try await writer.transaction { db in
                        try insert(name, db)
                        if name == "refused" { throw Refused() }
                    }
                })
            try await eventually("\(name) waits for its turn") { writer.queuedTurns == queued + 1 }
        }
        return tasks
    }

    @Test func transactionsQueuedBehindEachOtherCommitOnce() async throws {
        let (writer, path, dir) = try Self.writer()
        defer { try? FileManager.default.removeItem(at: dir) }
        let gate = Gate()
        let first = try await Self.hold(writer, gate, writing: "a")
        let queued = try await Self.queue(writer, ["b", "c", "d"])
        let before = writer.groupsCommitted
        await gate.open()
        try await first.value
        #expect(
            try Self.committed(path) == ["a", "b", "c", "d"], "the first caller goes on only once its group committed")
        for task in queued { try await task.value }
        #expect(writer.groupsCommitted == before + 1, "four transactions, one commit")
    }

    @Test func aTransactionRunsOnTheWritersQueueAndItsCallerGoesOnElsewhere() async throws {
        let (writer, _, dir) = try Self.writer()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(!writer.onWriterQueue)
        let inside = try await writer.transaction { db in
            try Self.insert("a", db)
            await Task.yield()
            return writer.onWriterQueue
        }
        #expect(inside, "the body, across an await, runs where the next turn is handed over")
        #expect(!writer.onWriterQueue)
    }

    @Test func aTransactionKeepsItsPlaceInLineWhileTheWritersQueueIsBusy() async throws {
        // A path commit on the queue: a transaction asked for meanwhile runs before work asked for after it.
        let (writer, _, dir) = try Self.writer()
        defer { try? FileManager.default.removeItem(at: dir) }
        let order = Log()
        let busy = DispatchSemaphore(value: 0)
        defer { busy.signal() }  // a failed wait below leaves no queue blocked for good (a second signal is harmless)
        writer.async { _ in
            busy.wait()
            order.append("commit under way")
        }
        let transaction = Task {
            try await writer.transaction { db in
                try Self.insert("a", db); order.append("transaction")
            }
        }
        try await eventually("the transaction is in line") { writer.queuedTurns == 1 }
        let after = Task {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                writer.async { _ in
                    order.append("work asked for after"); done.resume()
                }
            }
        }
        try await eventually("the work is in line") { writer.queuedTurns == 2 }
        busy.signal()
        try await transaction.value
        await after.value
        #expect(order.all == ["commit under way", "transaction", "work asked for after"])
    }

    @Test func aTransactionThatFailsInAGroupIsUndoneAlone() async throws {
        let (writer, path, dir) = try Self.writer()
        defer { try? FileManager.default.removeItem(at: dir) }
        let gate = Gate()
        let first = try await Self.hold(writer, gate, writing: "a")
        let queued = try await Self.queue(writer, ["b", "refused", "d"])
        await gate.open()
        try await first.value
        try await queued[0].value
        await #expect(throws: Refused.self) { try await queued[1].value }
        try await queued[2].value
        #expect(try Self.committed(path) == ["a", "b", "d"])
    }

    @Test func aFirstTransactionThatFailsLeavesNothingAndTheNextStartsAfresh() async throws {
        let (writer, path, dir) = try Self.writer()
        defer { try? FileManager.default.removeItem(at: dir) }
        await #expect(throws: Refused.self) {
            try await writer.transaction { db in
                try Self.insert("x", db); throw Refused()
            }
        }
        try await writer.transaction { db in try Self.insert("y", db) }
        #expect(try Self.committed(path) == ["y"])
        #expect(!writer.db.inTransaction)
    }

    @Test func aGroupCommitsAtItsLimit() async throws {
        let (writer, path, dir) = try Self.writer(groupLimit: 2)
        defer { try? FileManager.default.removeItem(at: dir) }
        let gate = Gate()
        let first = try await Self.hold(writer, gate, writing: "a")
        let queued = try await Self.queue(writer, ["b", "c", "d", "e"])
        let before = writer.groupsCommitted
        await gate.open()
        try await first.value
        for task in queued { try await task.value }
        #expect(try Self.committed(path) == ["a", "b", "c", "d", "e"])
        #expect(writer.groupsCommitted == before + 3, "groups of two: a b, c d, e")
    }

    @Test func workThatIsNotATransactionRunsAfterTheGroupBeforeItCommitted() async throws {
        // As the path store's commits do: synchronous work on the writer's queue, with a transaction of its own.
        let (writer, path, dir) = try Self.writer()
        defer { try? FileManager.default.removeItem(at: dir) }
        let gate = Gate()
        let first = try await Self.hold(writer, gate, writing: "a")
        let grouped = try await Self.queue(writer, ["b"])
        let seen = Mutex<[String]?>(nil)
        let queued = writer.queuedTurns
        let work = Task {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                writer.async { db in
                    seen.withLock { $0 = try? Self.committed(path) }
                    _ = try? db.transaction { try Self.insert("c", db) }
                    done.resume()
                }
            }
        }
        try await eventually("the work waits for its turn") { writer.queuedTurns == queued + 1 }
        let after = try await Self.queue(writer, ["d"])
        await gate.open()
        try await first.value
        try await grouped[0].value
        await work.value
        try await after[0].value
        #expect(seen.withLock { $0 } == ["a", "b"], "the group before the work was committed when it ran")
        #expect(try Self.committed(path) == ["a", "b", "c", "d"])
    }
}
