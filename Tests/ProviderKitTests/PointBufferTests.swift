import Foundation
import Testing
import EnRouteModels
import ProviderKit
import TestSupport

@Suite struct PointBufferTests {
    static let start = Date(timeIntervalSince1970: 1_792_520_000)

    /// A buffer on a fresh file; call `file.remove()` when done.
    func makeSUT(path: String, ids: SequentialIDs = SequentialIDs("batch")) throws -> (ProviderStore, PointBuffer) {
        let store = try ProviderStore(path: path)
        return (store, try PointBuffer(store: store, makeID: ids.maker))
    }

    /// `count` kept fixes 10 s apart, moving north.
    static func route(_ count: Int, from offset: Int = 0) -> [LocationFix] {
        (offset..<(offset + count)).map { i in
            Fixtures.fix(lat: 60.1699 + Double(i) * 0.001, at: start.addingTimeInterval(Double(i) * 10))
        }
    }

    @Test func keepsOnlyFixesThatPassTheFilter() throws {
        let file = TemporaryStorePath()
        defer { file.remove() }
        let (store, buffer) = try makeSUT(path: file.path)
        defer { store.close() }
        #expect(try buffer.record(Fixtures.fix(at: Self.start)) == .kept)
        #expect(try buffer.record(Fixtures.fix(accuracy: 80, at: Self.start.addingTimeInterval(10))) == .inaccurate)
        #expect(try buffer.record(Fixtures.fix(at: Self.start)) == .duplicate)
        #expect(try buffer.record(Fixtures.fix(lat: 60.16991, at: Self.start.addingTimeInterval(1))) == .tooClose)
        #expect(try buffer.count() == 1)
    }

    @Test func batchesGoOldestFirstAtMostOneHundredFixesEach() throws {
        let file = TemporaryStorePath()
        defer { file.remove() }
        let (store, buffer) = try makeSUT(path: file.path)
        defer { store.close() }
        let fixes = Self.route(250)
        for fix in fixes { try buffer.record(fix) }

        var sent: [LocationBatch] = []
        while let batch = try buffer.nextBatch() {
            sent.append(batch)
            try buffer.acknowledge(batch.batchId)
        }
        #expect(sent.map(\.fixes.count) == [100, 100, 50])
        #expect(sent.map(\.batchId) == ["batch-1", "batch-2", "batch-3"])
        #expect(sent.flatMap(\.fixes) == fixes)
        #expect(try buffer.count() == 0)
    }

    @Test func anUnacknowledgedBatchIsOfferedAgainWithTheSameIdAndFixes() throws {
        let file = TemporaryStorePath()
        defer { file.remove() }
        let (store, buffer) = try makeSUT(path: file.path)
        defer { store.close() }
        for fix in Self.route(3) { try buffer.record(fix) }
        let first = try #require(try buffer.nextBatch())
        for fix in Self.route(2, from: 3) { try buffer.record(fix) }  // newer fixes wait for the next batch

        let again = try #require(try buffer.nextBatch())
        #expect(again == first)
        try buffer.acknowledge(first.batchId)
        let next = try #require(try buffer.nextBatch())
        #expect(next.batchId != first.batchId)
        #expect(next.fixes == Array(Self.route(5)[3...]))
    }

    /// The process dies with fixes buffered and a batch sent but unanswered; the restarted app finds both.
    @Test func aRestartKeepsUnsentFixesAndTheOpenBatchId() throws {
        let file = TemporaryStorePath()
        defer { file.remove() }
        let ids = SequentialIDs("batch")
        var (store, buffer) = try makeSUT(path: file.path, ids: ids)
        for fix in Self.route(120) { try buffer.record(fix) }
        let open = try #require(try buffer.nextBatch())
        store.close()

        (store, buffer) = try makeSUT(path: file.path, ids: SequentialIDs("after-restart"))
        defer { store.close() }
        #expect(try buffer.count() == 120)
        #expect(buffer.lastKeptFix == Self.route(120).last)
        #expect(try buffer.nextBatch() == open)
        try buffer.acknowledge(open.batchId)
        #expect(try buffer.nextBatch()?.fixes == Array(Self.route(120)[100...]))
        // The filter still remembers the last kept fix: an older reading is a duplicate.
        #expect(try buffer.record(Self.route(1)[0]) == .duplicate)
    }
}
