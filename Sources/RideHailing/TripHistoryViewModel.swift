import Foundation
public import Observation
public import ClientKit
import EnRouteModels

/// The rider's past trips, newest first, paged by cursor; the last pages are kept in a `TripHistoryStore` and shown
/// when the server cannot be reached, marked as not fresh.
@MainActor @Observable
public final class TripHistoryViewModel {
    /// What the screen shows.
    public private(set) var state = TripHistoryViewState()

    @ObservationIgnored private let api: any TripHistoryAPI
    @ObservationIgnored private let store: any TripHistoryStore
    @ObservationIgnored private let dates: any DateProvider
    @ObservationIgnored private let pageSize: Int
    @ObservationIgnored private let keptPages: Int
    /// The pages fetched live since the first, as they will be kept.
    @ObservationIgnored private var pages: [TripSnapshotList] = []
    @ObservationIgnored private var fetchedAt: Date?

    static let offlineMessage = "You're offline. These are your trips as last seen."
    static let unavailableMessage = "Couldn't load your trips. Try again."
    static let moreFailedMessage = "Couldn't load more trips. Try again."

    /// A history over `api`, keeping its first `keptPages` pages of `pageSize` trips in `store`; `dates` stamps them.
    public init(
        api: any TripHistoryAPI, store: any TripHistoryStore, dates: any DateProvider, pageSize: Int = 20,
        keptPages: Int = 3
    ) {
        self.api = api
        self.store = store
        self.dates = dates
        self.pageSize = pageSize
        self.keptPages = keptPages
    }

    /// Loads the newest page; when that fails, shows the kept pages as not fresh.
    public func load() async {
        guard !state.isLoading else { return }
        state.isLoading = true
        defer { state.isLoading = false }
        do {
            let page = try await api.history(cursor: nil, limit: pageSize)
            pages = [page]
            fetchedAt = dates.now()
            show(pages, fresh: true, savedAt: fetchedAt)
            await keep()
        } catch {
            if let cache = try? await store.load(), !cache.pages.isEmpty {
                pages = []
                show(cache.pages, fresh: false, savedAt: cache.savedAt)
                state.errorMessage = Self.offlineMessage
            } else {
                state.errorMessage = Self.unavailableMessage
            }
        }
    }

    /// Loads the page after the last one shown; a page fetched live after live ones is kept too (up to `keptPages`).
    public func loadMore() async {
        guard state.canLoadMore, let cursor = state.nextCursor else { return }
        state.isLoading = true
        defer { state.isLoading = false }
        do {
            let page = try await api.history(cursor: cursor, limit: pageSize)
            state.trips += page.trips.filter { trip in !state.trips.contains { $0.id == trip.id } }
            state.nextCursor = page.nextCursor
            if state.isFresh {
                pages.append(page)
                await keep()
            }
            if state.isFresh { state.errorMessage = nil }
        } catch {
            state.errorMessage = state.isFresh ? Self.moreFailedMessage : Self.offlineMessage
        }
    }

    private func show(_ pages: [TripSnapshotList], fresh: Bool, savedAt: Date?) {
        var seen: Set<String> = []
        state.trips = pages.flatMap(\.trips).filter { seen.insert($0.id).inserted }
        state.nextCursor = pages.last?.nextCursor
        state.isFresh = fresh
        state.savedAt = savedAt
        state.errorMessage = nil
    }

    /// Keeps the first `keptPages` live pages; failing to write only costs the offline copy.
    private func keep() async {
        guard let fetchedAt, pages.count <= keptPages else { return }
        try? await store.save(TripHistoryCache(pages: pages, savedAt: fetchedAt))
    }
}
