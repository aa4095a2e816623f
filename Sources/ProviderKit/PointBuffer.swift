import HTTPTransport
public import EnRouteModels

/// The platform's point buffer: filtered fixes kept in the local store until the server acknowledges their batch.
///
/// Batches go oldest first. A batch that was sent and not acknowledged stays open and is offered again with the
/// same id and the same fixes, so the server's batch-id dedupe makes a resend harmless.
public final class PointBuffer: Sendable {
    /// Fixes per batch; the server takes at most 100.
    public static let batchLimit = 100

    private let store: ProviderStore
    private let filter: LocationFilter
    private let makeID: @Sendable () -> String
    private let lastKept: Locked<LocationFix?>

    /// A buffer in `store`; `makeID` names new batches.
    public init(
        store: ProviderStore, filter: LocationFilter = LocationFilter(), makeID: @escaping @Sendable () -> String
    ) throws {
        self.store = store
        self.filter = filter
        self.makeID = makeID
        self.lastKept = Locked(try store.lastKeptFix())
    }

    /// Filters a reading and, when kept, writes it to the store; returns the filter's verdict.
    @discardableResult
    public func record(_ reading: LocationFix) throws -> LocationFilter.Verdict {
        let last = lastKept.withLock { $0 }
        let verdict = filter.judge(reading, after: last)
        guard verdict == .kept else { return verdict }
        try store.appendFix(reading)
        lastKept.withLock { $0 = reading }
        return verdict
    }

    /// The last fix the filter kept (survives a restart).
    public var lastKeptFix: LocationFix? { lastKept.withLock { $0 } }

    /// How many fixes wait for an acknowledgement.
    public func count() throws -> Int { try store.bufferedFixCount() }

    /// The next batch to send: the open one unchanged, else a new one of the oldest fixes; nil when empty.
    public func nextBatch() throws -> LocationBatch? {
        try store.nextBatch(limit: Self.batchLimit, makeID: makeID)
    }

    /// Deletes a batch the server acknowledged.
    public func acknowledge(_ batchId: String) throws {
        try store.deleteBatch(batchId)
    }
}
