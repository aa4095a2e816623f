import Foundation
import Testing
import HTTPTransport
import EnRouteModels
import TestSupport
@testable import RideHailing

/// The rider's history: newest first, paged by cursor, and its last pages kept to be read offline, marked as not
/// fresh.
@MainActor
@Suite struct TripHistoryViewModelTests {
    nonisolated static let page1 = TripSnapshotList(
        trips: [Fixtures.snapshot("T-9"), Fixtures.snapshot("T-8")], nextCursor: "c2")
    nonisolated static let page2 = TripSnapshotList(
        trips: [Fixtures.snapshot("T-7"), Fixtures.snapshot("T-6")], nextCursor: "c3")
    nonisolated static let page3 = TripSnapshotList(trips: [Fixtures.snapshot("T-5")], nextCursor: nil)

    private func makeSUT(
        store: any TripHistoryStore = InMemoryTripHistoryStore(), keptPages: Int = 3
    )
        -> (TripHistoryViewModel, FakeTripHistoryAPI, ManualClock)
    {
        let api = FakeTripHistoryAPI()
        let clock = ManualClock()
        return (
            TripHistoryViewModel(api: api, store: store, dates: clock.dates, pageSize: 2, keptPages: keptPages), api,
            clock
        )
    }

    nonisolated private static func online(_ cursor: String?, _ limit: Int) throws -> TripSnapshotList {
        switch cursor {
        case nil: page1
        case "c2": page2
        case "c3": page3
        default: throw FakeError(reason: "unknown cursor")
        }
    }

    nonisolated private static func offline(_ cursor: String?, _ limit: Int) throws -> TripSnapshotList {
        throw HTTPClientError.network("offline")
    }

    @Test func pagesAreFollowedByCursorAndKept() async throws {
        let store = InMemoryTripHistoryStore()
        let (model, api, clock) = makeSUT(store: store)
        api.expect(Self.online)
        await model.load()
        await model.loadMore()

        #expect(api.log.all == ["history(-, 2)", "history(c2, 2)"])
        #expect(model.state.trips.map(\.id) == ["T-9", "T-8", "T-7", "T-6"])
        #expect(model.state.nextCursor == "c3")
        #expect(model.state.isFresh)
        #expect(try await store.load() == TripHistoryCache(pages: [Self.page1, Self.page2], savedAt: clock.date))
    }

    @Test func offlineTheKeptPagesAreShownMarkedNotFresh() async throws {
        let savedAt = Fixtures.time.addingTimeInterval(-3600)
        let store = InMemoryTripHistoryStore(TripHistoryCache(pages: [Self.page1, Self.page2], savedAt: savedAt))
        let (model, api, _) = makeSUT(store: store)
        api.expect(Self.offline)
        await model.load()

        #expect(model.state.trips.map(\.id) == ["T-9", "T-8", "T-7", "T-6"])
        #expect(!model.state.isFresh)
        #expect(model.state.savedAt == savedAt)
        #expect(model.state.errorMessage == "You're offline. These are your trips as last seen.")
        #expect(try await store.load()?.pages.count == 2)  // reading offline does not overwrite the copy
    }

    @Test func offlineWithNothingKeptSaysSo() async {
        let (model, api, _) = makeSUT()
        api.expect(Self.offline)
        await model.load()
        #expect(model.state.trips.isEmpty)
        #expect(model.state.errorMessage == "Couldn't load your trips. Try again.")
    }

    @Test func onlyTheFirstPagesAreKept() async throws {
        let store = InMemoryTripHistoryStore()
        let (model, api, _) = makeSUT(store: store, keptPages: 2)
        api.expect(Self.online)
        await model.load()
        await model.loadMore()
        await model.loadMore()

        #expect(model.state.trips.count == 5)
        #expect(model.state.nextCursor == nil)
        #expect(!model.state.canLoadMore)
        #expect(try await store.load()?.pages == [Self.page1, Self.page2])
    }

    @Test func aFileStoreKeepsThePagesForTheNextLaunchOffline() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "history-\(UUID().uuidString)/rider-c1")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }

        let (first, firstAPI, clock) = makeSUT(store: FileTripHistoryStore(directory: directory))
        firstAPI.expect(Self.online)
        await first.load()

        let (relaunched, secondAPI, _) = makeSUT(store: FileTripHistoryStore(directory: directory))
        secondAPI.expect(Self.offline)
        await relaunched.load()
        #expect(relaunched.state.trips.map(\.id) == ["T-9", "T-8"])
        #expect(!relaunched.state.isFresh)
        #expect(relaunched.state.savedAt == clock.date)
    }

    @Test func aFileStoreWithoutAFileHasNothingKept() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("history-\(UUID().uuidString)")
        #expect(try await FileTripHistoryStore(directory: directory).load() == nil)
    }
}
