public import Foundation
public import EnRouteModels
import Synchronization

/// Where a quote's busy-time multiplier came from: the pickup's zone and its smoothed counts when it was priced.
public struct DemandZone: Codable, Sendable, Equatable {
    /// The zone's name (`HexCell`'s `band/q/r`).
    public let zone: String
    /// Ride requests waiting for a provider in the zone.
    public let open: Double
    /// Online providers with no trip in the zone.
    public let idle: Double
    public init(zone: String, open: Double, idle: Double) { self.zone = zone; self.open = open; self.idle = idle }
}

/// A price the backend promised before a trip: who asked, for what, the route and rule it was priced on, until when.
public struct Quote: Codable, Sendable, Equatable {
    public let id: String
    public let accountId: String
    public let kind: TripKind
    /// Rides: the product.
    public let productID: String?
    /// Deliveries: the merchant and the basket.
    public let merchantId: String?
    public let items: [OrderItem]?
    public let pickup: Coordinate
    public let dropoff: Coordinate
    /// The route it was priced on: road distance and time when there are roads, a straight line times a detour
    /// otherwise.
    public let distanceMeters: Double
    public let durationSeconds: Double
    /// Rides: seconds until the nearest provider could arrive, as shown.
    public let pickupWaitSeconds: Int
    /// The busy-time multiplier it was priced under (1.0 when calm).
    public let demand: Double
    /// Rides: the zone and counts the multiplier was read from (nil when demand was not measured).
    public let demandZone: DemandZone?
    public let price: PriceBreakdown
    /// The price list in force when it was priced.
    public let rules: PricingRules
    public let createdAt: Date
    public let expiresAt: Date
    /// A trip booked ahead: the time it was priced for (the trip must be booked for the same).
    public var scheduledFor: Date?

    public init(
        id: String, accountId: String, kind: TripKind, productID: String?, merchantId: String?, items: [OrderItem]?,
        pickup: Coordinate, dropoff: Coordinate, distanceMeters: Double, durationSeconds: Double,
        pickupWaitSeconds: Int,
        demand: Double, price: PriceBreakdown, rules: PricingRules, createdAt: Date, expiresAt: Date,
        demandZone: DemandZone? = nil
    ) {
        self.demandZone = demandZone
        self.id = id; self.accountId = accountId; self.kind = kind; self.productID = productID;
        self.merchantId = merchantId; self.items = items
        self.pickup = pickup; self.dropoff = dropoff; self.distanceMeters = distanceMeters;
        self.durationSeconds = durationSeconds
        self.pickupWaitSeconds = pickupWaitSeconds; self.demand = demand; self.price = price; self.rules = rules
        self.createdAt = createdAt; self.expiresAt = expiresAt
    }

    /// The ride quote as the rider app's estimate with its identity and time limit.
    public var estimate: Estimate {
        Estimate(
            productID: productID ?? "", fare: price.total, etaSeconds: pickupWaitSeconds, quoteId: id,
            expiresAt: expiresAt)
    }

    /// The basket quote on the wire.
    public var orderQuote: OrderQuote {
        OrderQuote(
            quoteId: id, expiresAt: expiresAt, lines: price.lines.filter { $0.kind == "item" },
            fees: price.lines.filter { $0.kind != "item" }, total: price.total)
    }
}

extension Quote {
    /// For a store that keeps each price list once, apart from its quotes: set in an encoder's `userInfo` (to any
    /// value),
    /// the quote is written without `rules`; set in a decoder's `userInfo` to the `PricingRules` the stored quote
    /// names,
    /// a quote written without them is read with these.
    public static let priceListApart = CodingUserInfoKey(rawValue: "enroute.quote.priceListApart")!

    private enum CodingKeys: String, CodingKey {
        case id, accountId, kind, productID, merchantId, items, pickup, dropoff, distanceMeters, durationSeconds,
            pickupWaitSeconds
        case demand, demandZone, price, rules, createdAt, expiresAt, scheduledFor
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let rules: PricingRules
        if let written = try c.decodeIfPresent(PricingRules.self, forKey: .rules) {
            rules = written
        } else if let apart = decoder.userInfo[Self.priceListApart] as? PricingRules {
            rules = apart
        } else {
            throw DecodingError.keyNotFound(
                CodingKeys.rules, .init(codingPath: c.codingPath, debugDescription: "a quote needs its price list"))
        }
        self.init(
            id: try c.decode(String.self, forKey: .id), accountId: try c.decode(String.self, forKey: .accountId),
            kind: try c.decode(TripKind.self, forKey: .kind),
            productID: try c.decodeIfPresent(String.self, forKey: .productID),
            merchantId: try c.decodeIfPresent(String.self, forKey: .merchantId),
            items: try c.decodeIfPresent([OrderItem].self, forKey: .items),
            pickup: try c.decode(Coordinate.self, forKey: .pickup),
            dropoff: try c.decode(Coordinate.self, forKey: .dropoff),
            distanceMeters: try c.decode(Double.self, forKey: .distanceMeters),
            durationSeconds: try c.decode(Double.self, forKey: .durationSeconds),
            pickupWaitSeconds: try c.decode(Int.self, forKey: .pickupWaitSeconds),
            demand: try c.decode(Double.self, forKey: .demand),
            price: try c.decode(PriceBreakdown.self, forKey: .price), rules: rules,
            createdAt: try c.decode(Date.self, forKey: .createdAt),
            expiresAt: try c.decode(Date.self, forKey: .expiresAt),
            demandZone: try c.decodeIfPresent(DemandZone.self, forKey: .demandZone))
        scheduledFor = try c.decodeIfPresent(Date.self, forKey: .scheduledFor)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(accountId, forKey: .accountId)
        try c.encode(kind, forKey: .kind)
        try c.encodeIfPresent(productID, forKey: .productID)
        try c.encodeIfPresent(merchantId, forKey: .merchantId)
        try c.encodeIfPresent(items, forKey: .items)
        try c.encode(pickup, forKey: .pickup)
        try c.encode(dropoff, forKey: .dropoff)
        try c.encode(distanceMeters, forKey: .distanceMeters)
        try c.encode(durationSeconds, forKey: .durationSeconds)
        try c.encode(pickupWaitSeconds, forKey: .pickupWaitSeconds)
        try c.encode(demand, forKey: .demand)
        try c.encodeIfPresent(demandZone, forKey: .demandZone)
        try c.encode(price, forKey: .price)
        if encoder.userInfo[Self.priceListApart] == nil { try c.encode(rules, forKey: .rules) }
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(expiresAt, forKey: .expiresAt)
        try c.encodeIfPresent(scheduledFor, forKey: .scheduledFor)
    }
}

/// Where quotes are kept until they are used or run out.
public protocol QuoteStore: Sendable {
    func save(_ quotes: [Quote]) async throws
    /// The quote, or nil; async so that a store over the network is read without holding one of Swift's threads.
    func quote(id: String) async throws -> Quote?
    /// Forgets quotes that ran out before `cutoff`.
    func purge(expiredBefore cutoff: Date) async throws
}

/// Quotes in memory (tests, `--store memory`).
public final class InMemoryQuoteStore: QuoteStore {
    private let quotes = Mutex<[String: Quote]>([:])
    public init() {}
    public func save(_ new: [Quote]) async throws { quotes.withLock { q in for quote in new { q[quote.id] = quote } } }
    public func quote(id: String) throws -> Quote? { quotes.withLock { $0[id] } }
    public func purge(expiredBefore cutoff: Date) async throws {
        quotes.withLock { $0 = $0.filter { $0.value.expiresAt >= cutoff } }
    }
}

/// The road leg a quote is priced on.
public struct QuoteLeg: Sendable, Equatable {
    public let distanceMeters: Double
    public let durationSeconds: Double
    /// Seconds until the nearest available provider could be at the pickup.
    public let pickupWaitSeconds: Int
    public init(distanceMeters: Double, durationSeconds: Double, pickupWaitSeconds: Int) {
        self.distanceMeters = distanceMeters; self.durationSeconds = durationSeconds;
        self.pickupWaitSeconds = pickupWaitSeconds
    }
}

/// Issues quotes and checks the one a request names.
public final class QuoteBook: Sendable {
    public let store: any QuoteStore
    public let rules: PricingRules
    /// How long a quote holds.
    public let lifetime: TimeInterval
    private let estimator: any TripEstimator
    private let directory: any PartyDirectory
    private let ids: any IDGenerator
    private let now: @Sendable () -> Date
    /// Where quotes are given: only for trips a city EnRoute serves would take.
    private let cities: Cities
    /// Open requests and idle providers at a point (its zone's smoothed counts), for the busy-time multiplier.
    private let demand: Mutex<DemandMeasure?>

    /// The measure behind a struct: a bare closure in a `Mutex` is re-wrapped in two reabstraction thunks on every
    /// `withLock`, so each quote made the next one's call longer (and the process larger) without bound.
    private struct DemandMeasure: Sendable {
        let measure: @Sendable (Coordinate) async throws -> DemandZone?
    }

    public init(
        store: any QuoteStore, estimator: any TripEstimator, directory: any PartyDirectory,
        rules: PricingRules = PricingRules(),
        lifetime: TimeInterval = 300, ids: any IDGenerator, cities: Cities = .everywhere,
        now: @escaping @Sendable () -> Date
    ) {
        self.cities = cities
        self.store = store; self.estimator = estimator; self.directory = directory; self.rules = rules
        self.lifetime = lifetime; self.ids = ids; self.now = now
        demand = Mutex(nil)
    }

    /// Tells the book how busy an area is (wired once by the composition root: the zone's smoothed open requests and
    /// idle providers).
    public func measureDemand(with measure: @escaping @Sendable (Coordinate) async throws -> DemandZone?) {
        demand.withLock { $0 = DemandMeasure(measure: measure) }
    }

    /// The busy-time multiplier at `point` now; 1 when the area cannot be measured.
    public func demandMultiplier(at point: Coordinate) async -> Double { await demand(at: point).multiplier }

    /// The multiplier at `point` and the zone it was read from.
    public func demand(at point: Coordinate) async -> (multiplier: Double, zone: DemandZone?) {
        guard let demand = demand.withLock({ $0 }), let measured = try? await demand.measure(point) else {
            return (1, nil)
        }
        return (rules.demand.multiplier(open: measured.open, online: measured.idle), measured)
    }

    /// One quote per product for a ride from `pickup` to `dropoff`, kept for `lifetime`.
    ///
    /// A ride booked ahead (`scheduledFor`) is priced for that hour: the road times of its departure, and no busy-time
    /// multiplier, since how busy it is now says nothing about then.
    public func rideQuotes(
        pickup: Coordinate, dropoff: Coordinate, scheduledFor: Date? = nil, for account: Account
    ) async throws -> [Quote] {
        try TripService.validate(pickup, "/pickup")
        try TripService.validate(dropoff, "/dropoff")
        _ = try cities.city(for: pickup, pointer: "/pickup")
        let at = now()
        try BookingAhead.check(scheduledFor, now: at)
        let leg = try await estimator.quoteLeg(pickup: pickup, dropoff: dropoff, departure: scheduledFor ?? at)
        let (multiplier, zone) = scheduledFor == nil ? await demand(at: pickup) : (1, nil)
        let quotes = estimator.products.compactMap { product -> Quote? in
            guard
                let price = Pricing.ride(
                    product: product, distanceMeters: leg.distanceMeters, durationSeconds: leg.durationSeconds,
                    demand: multiplier, rules: rules)
            else { return nil }
            // A bigger car is rarer: its wait is a little longer, as the straight-line estimator has always said. When
            // the zone is busy the nearest idle provider is likely taken first: the wait grows with the multiplier.
            let wait = Int((Double(leg.pickupWaitSeconds) * multiplier).rounded()) + (product == "economy" ? 0 : 120)
            var quote = Quote(
                id: "q_" + ids.next(), accountId: account.id, kind: .ride, productID: product, merchantId: nil,
                items: nil,
                pickup: pickup, dropoff: dropoff, distanceMeters: leg.distanceMeters,
                durationSeconds: leg.durationSeconds,
                pickupWaitSeconds: wait, demand: multiplier, price: price, rules: rules, createdAt: at,
                expiresAt: at.addingTimeInterval(lifetime), demandZone: zone)
            quote.scheduledFor = scheduledFor
            return quote
        }
        try await store.save(quotes)
        return quotes
    }

    /// A basket's quote: item lines from the merchant's catalogue, the fees for the road from the merchant to
    /// `destination`.
    public func orderQuote(_ request: OrderQuoteRequest, for account: Account) async throws -> Quote {
        let merchant = try TripService.checkBasket(
            merchantId: request.merchantId, items: request.items, destination: request.destination, directory: directory
        )
        try await estimator.checkCovered(request.destination, pointer: "/destination")
        _ = try cities.city(for: merchant.position, pointer: "/merchantId")
        let at = now()
        try BookingAhead.check(request.scheduledFor, now: at)
        let leg = try await estimator.quoteLeg(
            pickup: merchant.position, dropoff: request.destination, departure: request.scheduledFor ?? at)
        var priced: [(sku: String, name: String, quantity: Int, unit: Money)] = []
        for (i, item) in request.items.enumerated() {
            guard let entry = merchant.item(sku: item.sku) else {
                throw TripError.invalid(
                    pointer: "/items/\(i)/sku", detail: "merchant \(merchant.id) sells no item with sku \(item.sku)")
            }
            guard entry.price.currency == rules.currency else {
                throw TripError.invalid(
                    pointer: "/items/\(i)/sku",
                    detail: "is priced in \(entry.price.currency); this service charges in \(rules.currency)")
            }
            priced.append((item.sku, entry.name, item.quantity, entry.price))
        }
        let basket = Pricing.basket(items: priced, distanceMeters: leg.distanceMeters, rules: rules)
        var quote = Quote(
            id: "q_" + ids.next(), accountId: account.id, kind: .delivery, productID: nil, merchantId: merchant.id,
            items: request.items,
            pickup: merchant.position, dropoff: request.destination, distanceMeters: leg.distanceMeters,
            durationSeconds: leg.durationSeconds,
            pickupWaitSeconds: 0, demand: 1,
            price: PriceBreakdown(lines: basket.lines + basket.fees, currency: rules.currency),
            rules: rules, createdAt: at, expiresAt: at.addingTimeInterval(lifetime))
        quote.scheduledFor = request.scheduledFor
        try await store.save([quote])
        return quote
    }

    /// The quote a ride request names, if it is the caller's, for this product and route, and still good; an expired
    /// one is
    /// refused with a fresh quote for the same request.
    public func acceptRide(_ request: TripRequest, by account: Account) async throws -> Quote {
        let quote = try await named(request.quoteId, by: account, kind: .ride)
        guard quote.productID == request.productID else {
            throw TripError.invalid(
                pointer: "/productID", detail: "does not match quote \(quote.id) (\(quote.productID ?? "none"))")
        }
        guard Self.same(quote.pickup, request.pickup) else {
            throw TripError.invalid(pointer: "/pickup", detail: "is not where quote \(quote.id) picks up")
        }
        guard Self.same(quote.dropoff, request.dropoff) else {
            throw TripError.invalid(pointer: "/dropoff", detail: "is not where quote \(quote.id) goes")
        }
        try Self.checkSameTime(quote, request.scheduledFor)
        if quote.expiresAt <= now() {
            let fresh = try await rideQuotes(
                pickup: request.pickup, dropoff: request.dropoff, scheduledFor: request.scheduledFor, for: account)
            guard let same = fresh.first(where: { $0.productID == request.productID }) else {
                throw TripError.invalid(pointer: "/productID", detail: "is no longer offered")
            }
            throw TripError.quoteExpired(.ride(same.estimate))
        }
        return quote
    }

    /// The quote an order names, if it is the caller's, for this basket and destination, and still good.
    public func acceptOrder(_ request: PlaceOrderRequest, by account: Account) async throws -> Quote {
        let quote = try await named(request.quoteId, by: account, kind: .delivery)
        guard quote.merchantId == request.merchantId, quote.items == request.items else {
            throw TripError.invalid(pointer: "/items", detail: "is not the basket quote \(quote.id) priced")
        }
        guard Self.same(quote.dropoff, request.destination) else {
            throw TripError.invalid(pointer: "/destination", detail: "is not where quote \(quote.id) delivers")
        }
        try Self.checkSameTime(quote, request.scheduledFor)
        if quote.expiresAt <= now() {
            let fresh = try await orderQuote(
                OrderQuoteRequest(
                    merchantId: request.merchantId, items: request.items, destination: request.destination,
                    scheduledFor: request.scheduledFor),
                for: account)
            throw TripError.quoteExpired(.order(fresh.orderQuote))
        }
        return quote
    }

    private func named(_ id: String?, by account: Account, kind: TripKind) async throws -> Quote {
        guard let id, !id.isEmpty else {
            throw TripError.invalid(
                pointer: "/quoteId",
                detail:
                    "is required: ask for a quote first "
                    + "(\(kind == .ride ? "POST /v1/estimates" : "POST /v1/orders/quote"))"
            )
        }
        // Another account's quote is answered like an unknown one: its existence is not the caller's to learn.
        guard let quote = try await store.quote(id: id), quote.accountId == account.id, quote.kind == kind else {
            throw TripError.invalid(pointer: "/quoteId", detail: "no quote \(id) for this account")
        }
        return quote
    }

    /// A quote stays bound to the time it was priced for: asked for now, or booked ahead for that very time.
    static func checkSameTime(_ quote: Quote, _ scheduledFor: Date?) throws(TripError) {
        let same =
            switch (quote.scheduledFor, scheduledFor) {
            case (nil, nil): true
            case (let priced?, let asked?): abs(priced.timeIntervalSince(asked)) < 0.001
            default: false
            }
        guard same else {
            let priced = quote.scheduledFor.map { "for \(ISO8601.format($0))" } ?? "for a trip now"
            throw TripError.invalid(
                pointer: "/scheduledFor", detail: "is not the time quote \(quote.id) was priced \(priced)")
        }
    }

    /// Two coordinates the client echoed back: equal to about a centimetre.
    static func same(_ a: Coordinate, _ b: Coordinate) -> Bool {
        abs(a.lat - b.lat) < 1e-7 && abs(a.lng - b.lng) < 1e-7
    }
}
