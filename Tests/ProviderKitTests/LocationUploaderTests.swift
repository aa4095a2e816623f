import Foundation
import Testing
import HTTPTransport
import EnRouteModels
import ProviderKit
import TestSupport

@Suite struct LocationUploaderTests {
    struct SUT {
        let clock: ManualClock
        let file: TemporaryStorePath
        let store: ProviderStore
        let buffer: PointBuffer
        let api: FakeLocationUploading
        let uploader: LocationUploader
        let running: Task<Void, Never>

        func stop() async {
            running.cancel()
            await running.value
            store.close()
            file.remove()
        }

        /// Advances the clock by `seconds`, one uploader tick at a time.
        func advance(seconds: Int) async throws {
            for _ in 0..<(seconds / 5) {
                try await eventually("the uploader's tick") { clock.sleeperCount > 0 }
                await clock.advance(by: .seconds(5))
            }
            try await eventually("the uploader's next tick") { clock.sleeperCount > 0 }
        }

        func record(_ count: Int, from offset: Int = 0) throws {
            for fix in PointBufferTests.route(count, from: offset) { try buffer.record(fix) }
        }
    }

    func makeSUT(_ answers: [FakeLocationUploading.Answer] = [], onTrip: Bool) async throws -> SUT {
        let file = TemporaryStorePath()
        let store = try ProviderStore(path: file.path)
        let buffer = try PointBuffer(store: store, makeID: SequentialIDs("batch").maker)
        let api = FakeLocationUploading(answers)
        let clock = ManualClock()
        let uploader = LocationUploader(buffer: buffer, api: api, clock: clock)
        await uploader.setOnTrip(onTrip)
        let running = Task { await uploader.run() }
        return SUT(
            clock: clock, file: file, store: store, buffer: buffer, api: api, uploader: uploader, running: running)
    }

    @Test func duringATripUploadsEveryFiveSeconds() async throws {
        let sut = try await makeSUT([.acknowledge, .acknowledge], onTrip: true)
        try sut.record(3)
        try await sut.advance(seconds: 5)
        #expect(sut.api.batches.map(\.fixes.count) == [3])
        try sut.record(2, from: 3)
        try await sut.advance(seconds: 5)
        #expect(sut.api.batches.map(\.fixes.count) == [3, 2])
        #expect(try sut.buffer.count() == 0)
        await sut.stop()
    }

    @Test func whileIdleUploadsOnlyEveryThirtySeconds() async throws {
        let sut = try await makeSUT([.acknowledge], onTrip: false)
        try sut.record(4)
        try await sut.advance(seconds: 25)
        #expect(sut.api.batches.isEmpty)
        try await sut.advance(seconds: 5)
        #expect(sut.api.batches.map(\.fixes.count) == [4])
        await sut.stop()
    }

    @Test func aFailedBatchStaysAndIsResentWithTheSameId() async throws {
        let sut = try await makeSUT(
            [.fail(HTTPClientError.network("offline")), .acknowledge, .acknowledge], onTrip: true)
        try sut.record(3)
        try await sut.advance(seconds: 5)
        #expect(try sut.buffer.count() == 3)
        try sut.record(1, from: 3)
        try await sut.advance(seconds: 5)
        let batches = sut.api.batches
        #expect(batches.count == 3)
        #expect(batches[0] == batches[1])
        #expect(batches[2].batchId != batches[0].batchId)
        #expect(batches[2].fixes.count == 1)  // the newer fix, in a batch of its own after the resend
        #expect(try sut.buffer.count() == 0)
        await sut.stop()
    }

    @Test func retryAfterHoldsTheNextUploadBack() async throws {
        let sut = try await makeSUT(
            [.fail(APIError.retryAfter(.seconds(20), status: 429)), .acknowledge], onTrip: true)
        try sut.record(2)
        try await sut.advance(seconds: 5)
        try await sut.advance(seconds: 20)
        #expect(sut.api.batches.count == 1)
        try await sut.advance(seconds: 5)
        #expect(sut.api.batches.count == 2)
        await sut.stop()
    }

    /// A 422 will never succeed: the batch is dropped so the buffer behind it can move.
    @Test func aBatchRefusedForGoodIsDroppedAndTheNextOneGoes() async throws {
        let refused = APIError.problem(Problem(title: "Invalid", status: 422))
        let sut = try await makeSUT([.fail(refused)], onTrip: true)
        try sut.record(101)
        sut.api.expect([.acknowledge])
        try await sut.advance(seconds: 5)
        #expect(sut.api.batches.map(\.fixes.count) == [100, 1])
        #expect(try sut.buffer.count() == 0)
        await sut.stop()
    }

    /// The real server acknowledges a batch and a resent batch id.
    @Test func theServerAcknowledgesABatchAndItsResend() async throws {
        let backend = TestBackend()
        let trip = try await backend.assignedRide()
        let (http, server) = backend.client("p1", .provider)
        let api = RemoteProviderAPI(client: http, server: server)
        let batch = LocationBatch(
            batchId: "b-1",
            fixes: PointBufferTests.route(3).map {
                Fixtures.fix(
                    lat: $0.lat,
                    at: backend.clock.date.addingTimeInterval(
                        $0.recordedAt.timeIntervalSince(PointBufferTests.start) - 60))
            })
        let first = try await api.upload(batch)
        #expect(first.batchId == "b-1")
        #expect(first.accepted + first.dropped == 3)
        let resent = try await api.upload(batch)
        #expect(resent.batchId == "b-1")
        #expect(trip.providerId == "p1")
    }
}
