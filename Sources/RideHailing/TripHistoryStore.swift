public import Foundation
public import EnRouteModels

/// The last pages of the rider's history as they were fetched, kept for reading offline (past
/// trips appear if visited; nothing live is kept).
public struct TripHistoryCache: Codable, Sendable, Equatable {
    /// The pages in order from the newest, each as the server sent it.
    public var pages: [TripSnapshotList]
    /// When the first page was fetched.
    public var savedAt: Date
    /// The pages fetched at `savedAt`.
    public init(pages: [TripSnapshotList], savedAt: Date) { self.pages = pages; self.savedAt = savedAt }
}

/// Where the history's last pages are kept between launches.
public protocol TripHistoryStore: Sendable {
    /// The kept pages, or nil when none were kept.
    func load() async throws -> TripHistoryCache?
    /// Replaces the kept pages.
    func save(_ cache: TripHistoryCache) async throws
}

/// A `TripHistoryStore` in memory, for tests and previews.
public actor InMemoryTripHistoryStore: TripHistoryStore {
    private var cache: TripHistoryCache?
    /// A store holding `cache`.
    public init(_ cache: TripHistoryCache? = nil) { self.cache = cache }
    public func load() -> TripHistoryCache? { cache }
    public func save(_ cache: TripHistoryCache) { self.cache = cache }
}
