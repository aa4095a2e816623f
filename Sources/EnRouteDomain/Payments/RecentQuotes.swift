public import Foundation
import Synchronization

/// A quote store that keeps the quotes this process saved most recently in memory, in front of `store`. A request
/// names the quote its estimate saved moments before, and reading it back (a row, then decoding it) was a fifth of a
/// create's work. Quotes never change once saved, so a quote read here is the stored one; another node's quote, or
/// one pushed out by newer ones, is read from `store`.
public final class RecentQuotes: QuoteStore {
    private let store: any QuoteStore
    private let kept = Mutex(Ring())

    /// The quotes saved through this store, oldest first, at most `limit`.
    private struct Ring {
        var byID: [String: Quote] = [:]
        var order: [String] = []
        var next = 0
    }

    /// How many quotes are kept: an estimate saves one per product, and a customer confirms within minutes.
    public let limit: Int

    /// `store` with the last `limit` quotes saved through it in memory.
    public init(_ store: any QuoteStore, limit: Int = 4_096) {
        self.store = store
        self.limit = max(1, limit)
    }

    public func save(_ quotes: [Quote]) async throws {
        try await store.save(quotes)
        // Only once saved: a quote whose save failed is not one the store has.
        kept.withLock { ring in
            for quote in quotes { Self.keep(quote, in: &ring, limit: limit) }
        }
    }

    public func quote(id: String) async throws -> Quote? {
        if let quote = kept.withLock({ $0.byID[id] }) { return quote }
        return try await store.quote(id: id)
    }

    public func purge(expiredBefore cutoff: Date) async throws {
        try await store.purge(expiredBefore: cutoff)
        kept.withLock { ring in
            ring.byID = ring.byID.filter { $0.value.expiresAt >= cutoff }
        }
    }

    /// How many quotes are in memory now.
    public var count: Int { kept.withLock { $0.byID.count } }

    private static func keep(_ quote: Quote, in ring: inout Ring, limit: Int) {
        if ring.byID.updateValue(quote, forKey: quote.id) != nil { return }
        if ring.order.count < limit {
            ring.order.append(quote.id)
            return
        }
        // Full: the oldest slot's quote leaves (unless purged already), the new one takes its place.
        let oldest = ring.order[ring.next]
        if oldest != quote.id { ring.byID[oldest] = nil }
        ring.order[ring.next] = quote.id
        ring.next = (ring.next + 1) % limit
    }
}
