import Foundation
import Testing
import EnRouteDomain
import EnRouteModels
import EnRouteSQLite
import SQLiteClient

/// Quotes on SQLite: each price list is stored once and every quote priced on it reads back whole; quotes stored with
/// their price list inside (before lists were kept apart) still read.
@Suite struct QuoteStoreTests {
    static func quote(_ id: String, rules: PricingRules = PricingRules(), product: String = "economy") -> Quote {
        let price = Pricing.ride(
            product: product, distanceMeters: 3_200, durationSeconds: 540, demand: 1, rules: rules)!
        return Quote(
            id: id, accountId: "c1", kind: .ride, productID: product, merchantId: nil, items: nil, pickup: Rows.pickup,
            dropoff: Rows.dropoff,
            distanceMeters: 3_200, durationSeconds: 540, pickupWaitSeconds: 180, demand: 1, price: price, rules: rules,
            createdAt: Rows.t0, expiresAt: Rows.t0.addingTimeInterval(300))
    }

    static func count(_ path: String, _ sql: String) throws -> Int64 {
        try SQLiteDatabase(path: path, readOnly: true).query(sql) { $0.int(0) }.first ?? -1
    }

    @Test func quotesPricedOnOneListStoreItOnceAndReadBackWhole() async throws {
        let file = try TemporaryDatabase("quotes")
        defer { file.remove() }
        let store = try SQLiteQuoteStore(tripStore: try SQLiteTripStore(path: file.path))
        var dearer = PricingRules()
        dearer.products["economy"]?.baseMinor += 100
        let quotes = [Self.quote("q1"), Self.quote("q2", product: "xl"), Self.quote("q3", rules: dearer)]
        try await store.save(Array(quotes.prefix(2)))
        try await store.save([quotes[2]])
        try await store.save([Self.quote("q4")])
        #expect(try Self.count(file.path, "SELECT COUNT(*) FROM price_lists") == 2, "two price lists for four quotes")
        for quote in quotes { #expect(try store.quote(id: quote.id) == quote) }
        // A fresh store over the same file reads the lists from the database.
        let reopened = try SQLiteQuoteStore(tripStore: try SQLiteTripStore(path: file.path))
        #expect(try reopened.quote(id: "q3")?.rules == dearer)
        #expect(try reopened.quote(id: "q4") == Self.quote("q4"))
        #expect(try reopened.quote(id: "nope") == nil)
    }

    @Test func aQuoteStoredWithItsPriceListInsideStillReads() async throws {
        let file = try TemporaryDatabase("quotes")
        defer { file.remove() }
        let store = try SQLiteQuoteStore(tripStore: try SQLiteTripStore(path: file.path))
        let old = Self.quote("q-old")
        let record = Array(try WireCoding.encoder().encode(old))
        let db = try SQLiteDatabase(path: file.path)
        try db.run(
            "INSERT INTO quotes (id, account_id, expires_at, record) VALUES (?1, ?2, ?3, ?4)",
            [.text(old.id), .text(old.accountId), .real(old.expiresAt.timeIntervalSince1970), .blob(record)])
        #expect(try store.quote(id: "q-old") == old)
    }

    @Test func aQuoteWrittenWithoutItsPriceListCannotBeReadWithoutOne() throws {
        let encoder = WireCoding.encoder()
        encoder.userInfo[Quote.priceListApart] = true
        let bare = try encoder.encode(Self.quote("q1"))
        #expect(!String(decoding: bare, as: UTF8.self).contains("\"rules\""))
        #expect(throws: DecodingError.self) { try WireCoding.decoder().decode(Quote.self, from: bare) }
        let decoder = WireCoding.decoder()
        decoder.userInfo[Quote.priceListApart] = PricingRules()
        #expect(try decoder.decode(Quote.self, from: bare) == Self.quote("q1"))
    }
}
