import Foundation
import Testing
import SQLiteClient
@testable import EnRouteSQLite

/// The writer's write-ahead log is copied into the database by its checkpointer, not by SQLite inside the commit
/// that crosses the threshold.
@Suite struct WALCheckpointTests {
    /// A fresh temporary folder, which the caller removes.
    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("wal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A writer over a fresh database with one table, in a temporary folder the caller removes.
    static func writer(checkpointPages: Int) throws -> (SQLiteWriter, path: String, dir: URL) {
        let dir = try folder()
        let path = dir.appendingPathComponent("db.sqlite").path
        let writer = try SQLiteWriter(path: path, label: "test.writer", checkpointPages: checkpointPages)
        try writer.db.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, payload BLOB NOT NULL)")
        return (writer, path, dir)
    }

    /// Commits `count` rows of 4 KB, one transaction each, in the writer's turns.
    static func write(_ writer: SQLiteWriter, count: Int) async throws {
        for _ in 0..<count {
            try await writer.transaction { db in
                try db.run("INSERT INTO rows (payload) VALUES (?1)", [.blob(Array(repeating: 7, count: 4_096))])
            }
        }
    }

    /// Bytes of the database file itself: in WAL mode only a checkpoint writes it.
    static func databaseBytes(_ path: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
    }

    @Test func aLogPastTheThresholdIsCopiedIntoTheDatabaseByTheCheckpointer() async throws {
        let (writer, path, dir) = try Self.writer(checkpointPages: 16)
        defer { try? FileManager.default.removeItem(at: dir) }
        let before = try Self.databaseBytes(path)
        try await Self.write(writer, count: 40)
        await writer.checkpointer.settled()
        // The commits after the last checkpoint's copy left fewer pages than the threshold, which stay in the log: one
        // more checkpoint, as the next commit past the threshold would ask for, copies them too.
        writer.checkpoint()
        await writer.checkpointer.settled()
        // 40 rows of 4 KB: at least 160 KB copied in, with the rows readable from the file alone.
        #expect(try Self.databaseBytes(path) >= before + 40 * 4_096)
        #expect(try SQLiteDatabase(path: path, readOnly: true).query("SELECT COUNT(*) FROM rows") { $0.int(0) } == [40])
        // Everything was copied, the rest by the writer: the next commit starts the log over.
        try await Self.write(writer, count: 1)
        #expect(await Self.walPages(writer) < 16)
    }

    /// The log's size in pages, read in the writer's turn (its connection is the writer's alone).
    static func walPages(_ writer: SQLiteWriter) async -> Int {
        await withCheckedContinuation { done in
            writer.async { db in done.resume(returning: (try? db.checkpoint().walPages) ?? -1) }
        }
    }

    @Test func theWritersCommitsNeverCheckpointBelowTheThreshold() async throws {
        // SQLite would copy the log inside the commit that took it past 1,000 pages; with the hook it is left to
        // the checkpointer, which this threshold never calls.
        let (writer, path, dir) = try Self.writer(checkpointPages: 100_000)
        defer { try? FileManager.default.removeItem(at: dir) }
        let before = try Self.databaseBytes(path)
        try await Self.write(writer, count: 1_200)
        await writer.checkpointer.settled()
        #expect(try Self.databaseBytes(path) == before)
        // Everything is in the log, and a checkpoint asked for copies all of it.
        let (pages, copied) = try writer.db.checkpoint()
        #expect(pages >= 1_200 && copied == pages)
        #expect(try Self.databaseBytes(path) >= before + 1_200 * 4_096)
    }

    @Test func aLogTheCheckpointerKeepsUpWithNeverTakesAWritersTurn() async throws {
        let (writer, path, dir) = try Self.writer(checkpointPages: 16)
        defer { try? FileManager.default.removeItem(at: dir) }
        let before = try Self.databaseBytes(path)
        for _ in 0..<40 {
            try await Self.write(writer, count: 1)
            await writer.checkpointer.settled()
        }
        // Copied whole each time, the log starts over at the next commit by itself: no write waited behind a sync.
        #expect(writer.restartStepsTaken == 0)
        #expect(try Self.databaseBytes(path) >= before + 40 * 4_096)
        #expect(await Self.walPages(writer) < 16 * SQLiteWriter.restartFactor)
    }

    @Test func aLogThatCannotBeCopiedWholeTakesTheWritersTurnOnlyPastTheRestartSize() async throws {
        let threshold = 10
        let (writer, path, dir) = try Self.writer(checkpointPages: threshold)
        defer { try? FileManager.default.removeItem(at: dir) }
        // A reader in a transaction keeps the log's later pages from being copied, so the log grows.
        let reader = try SQLiteDatabase(path: path)
        try reader.execute("BEGIN")
        _ = try reader.query("SELECT COUNT(*) FROM rows") { $0.int(0) }
        var rows = 0
        while writer.restartStepsTaken == 0, rows < 200 {
            let pages = await Self.walPages(writer)
            try await Self.write(writer, count: 1)
            await writer.checkpointer.settled()
            rows += 1
            if writer.restartStepsTaken > 0 {
                #expect(
                    pages >= threshold * SQLiteWriter.restartFactor - 4, "not before the log neared the restart size")
            }
        }
        #expect(writer.restartStepsTaken >= 1)
        try reader.execute("COMMIT")
    }

    @Test func theCheckpointerCopiesAQuietLogWholeInOnePassLeavingTheWriterNothing() async throws {
        let (writer, path, dir) = try Self.writer(checkpointPages: 100_000)
        defer { try? FileManager.default.removeItem(at: dir) }
        try await Self.write(writer, count: 50)
        let before = try Self.databaseBytes(path)
        let (passes, left) = writer.checkpointer.copyUntilLittleIsLeft()
        #expect(passes == 1 && left == 0, "nothing was committed meanwhile, so one pass catches up")
        #expect(try Self.databaseBytes(path) >= before + 50 * 4_096)
    }

    @Test func syncLogSyncsTheLogOfADatabaseInWALModeAndSaysWhenThereIsNone() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try SQLiteDatabase(path: dir.appendingPathComponent("db.sqlite").path)
        try db.execute("CREATE TABLE t (v BLOB)")
        try db.run("INSERT INTO t VALUES (?1)", [.blob(Array(repeating: 1, count: 8_192))])
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("db.sqlite-wal").path))
        #expect(db.syncLog())
        #expect(try SQLiteDatabase(path: ":memory:").syncLog() == false, "an in-memory database has no log file")
    }

    @Test func onCommitReportsTheLogGrowingWithEachCommit() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try SQLiteDatabase(path: dir.appendingPathComponent("db.sqlite").path)
        try db.execute("CREATE TABLE t (v BLOB)")
        final class Seen: @unchecked Sendable { var pages: [Int] = [] }
        let seen = Seen()
        db.onCommit { seen.pages.append($0) }
        for _ in 0..<3 { try db.run("INSERT INTO t VALUES (?1)", [.blob(Array(repeating: 1, count: 8_192))]) }
        #expect(seen.pages.count == 3)
        #expect(seen.pages == seen.pages.sorted() && seen.pages[2] > seen.pages[0])
    }
}
