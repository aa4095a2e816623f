import Foundation
import Testing
import Synchronization
import EnRouteModels
import TestSupport
import HTTPEngine
@testable import EnRouteDomain
@testable import EnRouteAPI

/// Quotes with an identity and an expiry, on the straight-line estimator, in memory, on a manual now.
@Suite struct QuoteBookTests {
    /// A `now` the test moves by hand.
    final class Now: Sendable {
        private let date = Mutex(Date(timeIntervalSince1970: 1_792_520_000))
        var value: Date { date.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { date.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    /// Where the book asked how busy the area is.
    final class Asked: Sendable { let points = Mutex<[Coordinate]>([]) }

    let now = Now()
    let store = InMemoryQuoteStore()
    let book: QuoteBook
    static let rider = Account(id: "c1", role: .customer)
    static let other = Account(id: "c2", role: .customer)
    static let pickup = Coordinate(lat: 60.17, lng: 24.94)
    static let dropoff = Coordinate(lat: 60.19, lng: 24.96)
    static let door = Coordinate(lat: 60.175, lng: 24.95)
    static let basket = [OrderItem(sku: "coffee", quantity: 2), OrderItem(sku: "bread", quantity: 1)]

    init() {
        let now = self.now
        book = QuoteBook(
            store: store, estimator: StraightLineEstimator(), directory: TestDirectory.helsinki,
            ids: SequentialIDGenerator(prefix: "Q"),
            now: { now.value })
    }

    /// The straight-line leg: great-circle metres × 1.3, at 8 m/s.
    static func leg(_ a: Coordinate, _ b: Coordinate) -> (meters: Double, seconds: Double) {
        let meters = StraightLineEstimator.distance(a, b) * 1.3
        return (meters, meters / 8)
    }

    /// The status and problem a client would see for `error`.
    static func http(_ error: any Error) -> HTTPError? {
        guard let error = error as? TripError else { return nil }
        return APIErrors.httpError(error) { $0.id }
    }

    /// The refusal `body` throws, as `TripError.invalid`'s pointer and detail.
    static func invalid(
        _ body: () async throws -> Quote, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> (pointer: String, detail: String)? {
        do {
            let quote = try await body()
            Issue.record("accepted \(quote.id)", sourceLocation: sourceLocation)
            return nil
        } catch let error as TripError {
            guard case .invalid(let pointer, let detail) = error else {
                Issue.record("\(error)", sourceLocation: sourceLocation); return nil
            }
            #expect(http(error)?.status == 422, sourceLocation: sourceLocation)
            return (pointer, detail)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    func rideQuote(_ product: String = "economy", for account: Account = Self.rider) async throws -> Quote {
        try #require(
            try await book.rideQuotes(pickup: Self.pickup, dropoff: Self.dropoff, for: account).first {
                $0.productID == product
            })
    }

    // MARK: - Ride quotes

    @Test func rideQuotesOnePerProductWithIdentityAndExpiry() async throws {
        let quotes = try await book.rideQuotes(pickup: Self.pickup, dropoff: Self.dropoff, for: Self.rider)
        let leg = Self.leg(Self.pickup, Self.dropoff)
        #expect(quotes.map(\.productID) == ["economy", "xl"])
        #expect(quotes.map(\.id) == ["q_Q1", "q_Q2"])
        for quote in quotes {
            #expect(quote.accountId == "c1" && quote.kind == .ride)
            #expect(quote.createdAt == now.value)
            #expect(quote.expiresAt == now.value.addingTimeInterval(300))
            #expect(abs(quote.distanceMeters - leg.meters) < 1e-6 && abs(quote.durationSeconds - leg.seconds) < 1e-6)
            #expect(quote.demand == 1)
            #expect(
                quote.price
                    == Pricing.ride(
                        product: quote.productID!, distanceMeters: quote.distanceMeters,
                        durationSeconds: quote.durationSeconds,
                        demand: 1, rules: PricingRules()))
            #expect(quote.rules == PricingRules())
            #expect(try await store.quote(id: quote.id) == quote)
            // On the wire: the rider app's estimate with its identity and expiry.
            #expect(
                quote.estimate
                    == Estimate(
                        productID: quote.productID!, fare: quote.price.total, etaSeconds: quote.pickupWaitSeconds,
                        quoteId: quote.id, expiresAt: quote.expiresAt))
        }
        #expect(quotes.map(\.pickupWaitSeconds) == [300, 420])
        // About 2.6 km straight, 3.4 km by road: economy 300 + 3.4 × 110 + 7 × 25 ≈ 850.
        #expect((800...900).contains(quotes[0].price.total.amountMinor))
    }

    @Test func aQuoteLivesForTheBooksLifetime() async throws {
        let now = self.now
        let short = QuoteBook(
            store: store, estimator: StraightLineEstimator(), directory: TestDirectory.helsinki, lifetime: 90,
            ids: SequentialIDGenerator(prefix: "S"), now: { now.value })
        let quotes = try await short.rideQuotes(pickup: Self.pickup, dropoff: Self.dropoff, for: Self.rider)
        #expect(quotes.allSatisfy { $0.expiresAt == now.value.addingTimeInterval(90) })
    }

    @Test func rideQuotesRefuseABadCoordinate() async {
        await #expect(throws: TripError.invalid(pointer: "/pickup/lat", detail: "must be between -90 and 90")) {
            _ = try await book.rideQuotes(pickup: Coordinate(lat: 91, lng: 0), dropoff: Self.dropoff, for: Self.rider)
        }
        await #expect(throws: TripError.invalid(pointer: "/dropoff/lng", detail: "must be between -180 and 180")) {
            _ = try await book.rideQuotes(pickup: Self.pickup, dropoff: Coordinate(lat: 0, lng: .nan), for: Self.rider)
        }
    }

    @Test func demandMultiplierIsAppliedWhenTheAreaIsBusy() async throws {
        #expect(await book.demandMultiplier(at: Self.pickup) == 1)
        let asked = Asked()
        // 13 open requests for 5 providers: 2.6 per provider → ×1.8.
        book.measureDemand { point in
            asked.points.withLock { $0.append(point) }
            return DemandZone(zone: "60/1/2", open: 13, idle: 5)
        }
        #expect(await book.demandMultiplier(at: Self.pickup) == 1.8)
        let calmWaits = try await book.rideQuotes(
            pickup: Self.pickup, dropoff: Self.dropoff, scheduledFor: now.value.addingTimeInterval(3_600),
            for: Self.rider
        ).map(\.pickupWaitSeconds)
        let quotes = try await book.rideQuotes(pickup: Self.pickup, dropoff: Self.dropoff, for: Self.rider)
        // The pickup estimate grows with the multiplier: the nearest idle provider is likely taken first.
        #expect(
            quotes.map(\.pickupWaitSeconds)
                == zip(calmWaits, quotes).map { calm, q in
                    let extra = q.productID == "economy" ? 0 : 120
                    return Int((Double(calm - extra) * 1.8).rounded()) + extra
                })
        #expect(asked.points.withLock { $0.last } == Self.pickup)
        for quote in quotes {
            #expect(quote.demand == 1.8)
            #expect(quote.demandZone == DemandZone(zone: "60/1/2", open: 13, idle: 5))
            let calm = try #require(
                Pricing.ride(
                    product: quote.productID!, distanceMeters: quote.distanceMeters,
                    durationSeconds: quote.durationSeconds,
                    demand: 1, rules: PricingRules()))
            let demand = try #require(quote.price.lines.first { $0.kind == "demand" })
            #expect(demand.amount.amountMinor == Pricing.round(Double(calm.total.amountMinor * 8) / 10))
            #expect(quote.price.total.amountMinor == calm.total.amountMinor + demand.amount.amountMinor)
        }
    }

    // MARK: - Accepting a ride quote

    @Test func acceptRideReturnsTheQuoteItNames() async throws {
        let quote = try await rideQuote()
        let accepted = try await book.acceptRide(
            TripRequest(pickup: Self.pickup, dropoff: Self.dropoff, productID: "economy", quoteId: quote.id),
            by: Self.rider)
        #expect(accepted == quote)
        // Echoed coordinates within about a centimetre are the same place.
        let near = Coordinate(lat: Self.pickup.lat + 5e-8, lng: Self.pickup.lng - 5e-8)
        let again = try await book.acceptRide(
            TripRequest(pickup: near, dropoff: Self.dropoff, productID: "economy", quoteId: quote.id), by: Self.rider)
        #expect(again == quote)
    }

    @Test func acceptRideRefusesAMissingQuoteId() async throws {
        for id in [nil, ""] as [String?] {
            let refusal = await Self.invalid {
                try await book.acceptRide(
                    TripRequest(pickup: Self.pickup, dropoff: Self.dropoff, productID: "economy", quoteId: id),
                    by: Self.rider)
            }
            #expect(refusal?.pointer == "/quoteId")
            #expect(refusal?.detail == "is required: ask for a quote first (POST /v1/estimates)")
        }
    }

    @Test func anotherAccountsQuoteIsRefusedInTheWordsOfAnUnknownOne() async throws {
        let theirs = try await rideQuote(for: Self.other)
        let unknown = await Self.invalid {
            try await book.acceptRide(
                TripRequest(pickup: Self.pickup, dropoff: Self.dropoff, productID: "economy", quoteId: "q_nope"),
                by: Self.rider)
        }
        let foreign = await Self.invalid {
            try await book.acceptRide(
                TripRequest(pickup: Self.pickup, dropoff: Self.dropoff, productID: "economy", quoteId: theirs.id),
                by: Self.rider)
        }
        #expect(unknown?.pointer == "/quoteId" && foreign?.pointer == "/quoteId")
        #expect(unknown?.detail == "no quote q_nope for this account")
        #expect(foreign?.detail.replacingOccurrences(of: theirs.id, with: "q_nope") == unknown?.detail)
        // Still theirs to use.
        #expect(
            try await book.acceptRide(
                TripRequest(pickup: Self.pickup, dropoff: Self.dropoff, productID: "economy", quoteId: theirs.id),
                by: Self.other) == theirs)
    }

    @Test func aBasketQuoteIsNoRideQuote() async throws {
        let order = try await book.orderQuote(
            OrderQuoteRequest(merchantId: "m1", items: Self.basket, destination: Self.door), for: Self.rider)
        let refusal = await Self.invalid {
            try await book.acceptRide(
                TripRequest(pickup: Self.pickup, dropoff: Self.dropoff, productID: "economy", quoteId: order.id),
                by: Self.rider)
        }
        #expect(refusal?.pointer == "/quoteId")
    }

    @Test func acceptRideNamesTheFieldThatDoesNotMatchTheQuote() async throws {
        let quote = try await rideQuote()
        let elsewhere = Coordinate(lat: 60.2, lng: 24.9)
        let cases: [(TripRequest, String)] = [
            (TripRequest(pickup: Self.pickup, dropoff: Self.dropoff, productID: "xl", quoteId: quote.id), "/productID"),
            (TripRequest(pickup: elsewhere, dropoff: Self.dropoff, productID: "economy", quoteId: quote.id), "/pickup"),
            (TripRequest(pickup: Self.pickup, dropoff: elsewhere, productID: "economy", quoteId: quote.id), "/dropoff"),
            // A metre off is another place.
            (
                TripRequest(
                    pickup: Self.pickup, dropoff: Coordinate(lat: Self.dropoff.lat + 1e-5, lng: Self.dropoff.lng),
                    productID: "economy", quoteId: quote.id), "/dropoff"
            ),
        ]
        for (request, pointer) in cases {
            let refusal = await Self.invalid { try await book.acceptRide(request, by: Self.rider) }
            #expect(refusal?.pointer == pointer)
            #expect(refusal?.detail.contains(quote.id) == true)
        }
    }

    @Test func anExpiredRideQuoteIsRefusedWithAFreshOne() async throws {
        let quote = try await rideQuote("xl")
        let request = TripRequest(pickup: Self.pickup, dropoff: Self.dropoff, productID: "xl", quoteId: quote.id)
        now.advance(299)
        #expect(try await book.acceptRide(request, by: Self.rider) == quote)
        now.advance(1)  // expiresAt itself is past
        do {
            _ = try await book.acceptRide(request, by: Self.rider)
            Issue.record("an expired quote was accepted")
        } catch let error as TripError {
            guard case .quoteExpired(.ride(let fresh)) = error else { Issue.record("\(error)"); return }
            #expect(fresh.productID == "xl")
            #expect(fresh.quoteId != nil && fresh.quoteId != quote.id)
            #expect(fresh.expiresAt == now.value.addingTimeInterval(300))
            #expect(fresh.expiresAt! > quote.expiresAt)
            #expect(fresh.fare == quote.price.total)
            #expect(Self.http(error)?.status == 409)
            // The fresh quote is kept and good to use.
            let renewed = TripRequest(
                pickup: Self.pickup, dropoff: Self.dropoff, productID: "xl", quoteId: fresh.quoteId)
            #expect(try await book.acceptRide(renewed, by: Self.rider).id == fresh.quoteId)
        }
    }

    // MARK: - Basket quotes

    @Test func orderQuoteLinesComeFromTheCatalogueWithTheFees() async throws {
        let quote = try await book.orderQuote(
            OrderQuoteRequest(merchantId: "m1", items: Self.basket, destination: Self.door), for: Self.rider)
        let m1 = Coordinate(lat: 60.16949, lng: 24.93752)
        let leg = Self.leg(m1, Self.door)
        #expect(quote.id == "q_Q1" && quote.kind == .delivery && quote.accountId == "c1")
        #expect(quote.merchantId == "m1" && quote.items == Self.basket)
        #expect(quote.pickup == m1 && quote.dropoff == Self.door)
        #expect(quote.expiresAt == now.value.addingTimeInterval(300))
        let wire = quote.orderQuote
        // 2 × 350 coffee, 1 × 420 rye bread → 1120; delivery 199 + km × 50; service 5 % of 1120 = 56; not a small
        // basket.
        #expect(
            wire.lines.map { "\($0.label) \($0.amount.amountMinor)" } == ["2 × Filter coffee 700", "1 × Rye bread 420"])
        #expect(wire.lines.map(\.sku) == ["coffee", "bread"])
        let delivery = 199 + Pricing.round(leg.meters / 1000 * 50)
        #expect(
            wire.fees.map { "\($0.kind) \($0.amount.amountMinor)" } == ["deliveryFee \(delivery)", "serviceFee 56"])
        #expect(wire.total == Money(amountMinor: 1120 + delivery + 56, currency: "EUR"))
        #expect(wire.quoteId == quote.id && wire.expiresAt == quote.expiresAt)
        #expect(try await store.quote(id: quote.id) == quote)
    }

    @Test func orderQuoteRefusesWhatTheMerchantDoesNotSell() async {
        await #expect(
            throws: TripError.invalid(pointer: "/items/1/sku", detail: "merchant m1 sells no item with sku caviar")
        ) {
            _ = try await book.orderQuote(
                OrderQuoteRequest(
                    merchantId: "m1",
                    items: [OrderItem(sku: "coffee", quantity: 1), OrderItem(sku: "caviar", quantity: 1)],
                    destination: Self.door), for: Self.rider)
        }
        await #expect(throws: TripError.invalid(pointer: "/merchantId", detail: "no merchant with id m9")) {
            _ = try await book.orderQuote(
                OrderQuoteRequest(merchantId: "m9", items: Self.basket, destination: Self.door), for: Self.rider)
        }
    }

    @Test func acceptOrderTakesTheSameBasketAndRefusesAChangedOne() async throws {
        let quote = try await book.orderQuote(
            OrderQuoteRequest(merchantId: "m1", items: Self.basket, destination: Self.door), for: Self.rider)
        #expect(
            try await book.acceptOrder(
                PlaceOrderRequest(merchantId: "m1", items: Self.basket, destination: Self.door, quoteId: quote.id),
                by: Self.rider) == quote)
        let cases: [(PlaceOrderRequest, String)] = [
            (
                PlaceOrderRequest(
                    merchantId: "m1",
                    items: [OrderItem(sku: "coffee", quantity: 3), OrderItem(sku: "bread", quantity: 1)],
                    destination: Self.door, quoteId: quote.id), "/items"
            ),
            (
                PlaceOrderRequest(
                    merchantId: "m1", items: [OrderItem(sku: "coffee", quantity: 2)], destination: Self.door,
                    quoteId: quote.id), "/items"
            ),
            (
                PlaceOrderRequest(merchantId: "m2", items: Self.basket, destination: Self.door, quoteId: quote.id),
                "/items"
            ),
            (
                PlaceOrderRequest(merchantId: "m1", items: Self.basket, destination: Self.dropoff, quoteId: quote.id),
                "/destination"
            ),
            (PlaceOrderRequest(merchantId: "m1", items: Self.basket, destination: Self.door, quoteId: nil), "/quoteId"),
            (
                PlaceOrderRequest(merchantId: "m1", items: Self.basket, destination: Self.door, quoteId: "q_nope"),
                "/quoteId"
            ),
        ]
        for (request, pointer) in cases {
            let refusal = await Self.invalid { try await book.acceptOrder(request, by: Self.rider) }
            #expect(refusal?.pointer == pointer, "\(request)")
        }
        let foreign = await Self.invalid {
            try await book.acceptOrder(
                PlaceOrderRequest(merchantId: "m1", items: Self.basket, destination: Self.door, quoteId: quote.id),
                by: Self.other)
        }
        #expect(foreign?.pointer == "/quoteId" && foreign?.detail == "no quote \(quote.id) for this account")
        let missing = await Self.invalid {
            try await book.acceptOrder(
                PlaceOrderRequest(merchantId: "m1", items: Self.basket, destination: Self.door), by: Self.rider)
        }
        #expect(missing?.detail == "is required: ask for a quote first (POST /v1/orders/quote)")
        // A ride quote is no basket quote.
        let ride = try await rideQuote()
        let wrongKind = await Self.invalid {
            try await book.acceptOrder(
                PlaceOrderRequest(merchantId: "m1", items: Self.basket, destination: Self.door, quoteId: ride.id),
                by: Self.rider)
        }
        #expect(wrongKind?.pointer == "/quoteId")
    }

    @Test func anExpiredBasketQuoteIsRefusedWithAFreshOne() async throws {
        let quote = try await book.orderQuote(
            OrderQuoteRequest(merchantId: "m1", items: Self.basket, destination: Self.door), for: Self.rider)
        now.advance(300)
        do {
            _ = try await book.acceptOrder(
                PlaceOrderRequest(merchantId: "m1", items: Self.basket, destination: Self.door, quoteId: quote.id),
                by: Self.rider)
            Issue.record("an expired quote was accepted")
        } catch let error as TripError {
            guard case .quoteExpired(.order(let fresh)) = error else { Issue.record("\(error)"); return }
            #expect(fresh.quoteId != quote.id)
            #expect(fresh.expiresAt == now.value.addingTimeInterval(300))
            #expect(
                fresh.lines == quote.orderQuote.lines && fresh.fees == quote.orderQuote.fees
                    && fresh.total == quote.price.total)
            #expect(Self.http(error)?.status == 409)
        }
    }
}
