public import EnRouteModels

/// The rider's past trips, newest first, a page at a time.
public protocol TripHistoryAPI: Sendable {
    /// One page of at most `limit` trips after `cursor` (nil: the newest); its `nextCursor` is nil on the last page.
    func history(cursor: String?, limit: Int) async throws -> TripSnapshotList
}
