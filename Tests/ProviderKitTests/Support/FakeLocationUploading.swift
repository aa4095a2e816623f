import Synchronization
import Testing
import HTTPTransport
import EnRouteModels
import ProviderKit

/// A `LocationUploading` that answers from a script and records every batch; an unscripted upload fails the test.
final class FakeLocationUploading: LocationUploading {
    enum Answer: Sendable { case acknowledge, fail(any Error & Sendable) }

    private let answers: Mutex<[Answer]>
    private let recorded = Mutex<[LocationBatch]>([])

    init(_ answers: [Answer] = []) { self.answers = Mutex(answers) }

    /// Tells the fake how to answer the next uploads.
    func expect(_ more: [Answer]) { answers.withLock { $0 += more } }

    var batches: [LocationBatch] { recorded.withLock { $0 } }

    func upload(_ batch: LocationBatch) async throws -> LocationBatchResult {
        recorded.withLock { $0.append(batch) }
        guard let answer = answers.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
            Issue.record("unexpected upload \(batch.batchId)")
            throw HTTPClientError.network("unexpected upload")
        }
        switch answer {
        case .acknowledge: return LocationBatchResult(batchId: batch.batchId, accepted: batch.fixes.count, dropped: 0)
        case .fail(let error): throw error
        }
    }
}
