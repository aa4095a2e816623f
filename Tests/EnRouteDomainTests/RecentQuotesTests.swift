import Foundation
import Testing
import Synchronization
import EnRouteModels
@testable import EnRouteDomain

/// The quotes just saved are answered from memory, the rest by the store behind, and nothing the store does not have
/// is ever answered: a failed save keeps nothing, a purge forgets what ran out, the oldest leave first.
@Suite struct RecentQuotesTests {
    /// A store that counts its reads and can refuse its saves.
    final class CountingStore: QuoteStore {
        let inner = InMemoryQuoteStore()
        let reads = Mutex(0)
        let refuseSaves = Mutex(false)
        struct Refused: Error {}

        func save(_ quotes: [Quote]) async throws {
            if refuseSaves.withLock({ $0 }) { throw Refused() }
            try await inner.save(quotes)
        }
        func quote(id: String) async throws -> Quote? {
            reads.withLock { $0 += 1 }
            return try inner.quote(id: id)
        }
        func purge(expiredBefore cutoff: Date) async throws { try await inner.purge(expiredBefore: cutoff) }
    }

    static let start = Date(timeIntervalSince1970: 1_792_000_000)

    static func quote(_ id: String, expiresIn seconds: TimeInterval = 600) -> Quote {
        Quote(
            id: id, accountId: "c1", kind: .ride, productID: "economy", merchantId: nil, items: nil,
            pickup: Coordinate(lat: 60.17, lng: 24.94), dropoff: Coordinate(lat: 60.18, lng: 24.95),
            distanceMeters: 1_500, durationSeconds: 300, pickupWaitSeconds: 240, demand: 1,
            price: PriceBreakdown(lines: [], currency: "EUR"), rules: PricingRules(), createdAt: start,
            expiresAt: start.addingTimeInterval(seconds))
    }

    @Test func aQuoteJustSavedIsAnsweredWithoutTheStore() async throws {
        let store = CountingStore()
        let recent = RecentQuotes(store)
        try await recent.save([Self.quote("q1"), Self.quote("q2")])
        #expect(try await recent.quote(id: "q2")?.id == "q2")
        #expect(store.reads.withLock { $0 } == 0)
        #expect(try await recent.quote(id: "elsewhere") == nil)
        #expect(store.reads.withLock { $0 } == 1, "a quote not kept is asked of the store")
    }

    @Test func aQuoteWhoseSaveFailedIsNotKept() async throws {
        let store = CountingStore()
        let recent = RecentQuotes(store)
        store.refuseSaves.withLock { $0 = true }
        await #expect(throws: CountingStore.Refused.self) { try await recent.save([Self.quote("q1")]) }
        #expect(try await recent.quote(id: "q1") == nil)
        #expect(recent.count == 0)
    }

    @Test(arguments: [(limit: 1, saved: 3), (limit: 2, saved: 5), (limit: 3, saved: 3), (limit: 4, saved: 10)])
    func theOldestLeaveFirstAndTheStoreStillAnswersForThem(limit: Int, saved: Int) async throws {
        let store = CountingStore()
        let recent = RecentQuotes(store, limit: limit)
        for i in 0..<saved { try await recent.save([Self.quote("q\(i)")]) }
        #expect(recent.count == min(limit, saved))
        for i in 0..<saved {
            let before = store.reads.withLock { $0 }
            #expect(try await recent.quote(id: "q\(i)")?.id == "q\(i)")
            let fromStore = store.reads.withLock { $0 } > before
            #expect(fromStore == (i < saved - limit), "q\(i) of \(saved) with room for \(limit)")
        }
    }

    @Test func aPurgeForgetsWhatRanOut() async throws {
        let store = CountingStore()
        let recent = RecentQuotes(store)
        try await recent.save([Self.quote("short", expiresIn: 60), Self.quote("long", expiresIn: 3_600)])
        try await recent.purge(expiredBefore: Self.start.addingTimeInterval(600))
        #expect(try await recent.quote(id: "short") == nil)
        #expect(try await recent.quote(id: "long")?.id == "long")
        #expect(recent.count == 1)
    }
}
