public import Foundation
public import EnRouteModels

/// Rides or deliveries: the two variants of a trip.
public enum TripKind: String, Codable, Sendable, CaseIterable {
    case ride, delivery
}

/// A delivery's status underneath the wire's `problem` overlay.
public enum DeliveryStatus: String, Codable, Sendable, CaseIterable {
    case placed, picking, onTheWay, arriving, delivered, cancelled

    /// Delivered and cancelled never reopen.
    public var isTerminal: Bool { self == .delivered || self == .cancelled }
}

/// The merchant's steps, which happen while the order is picking.
public enum MerchantStep: String, Codable, Sendable, CaseIterable {
    case pending, preparing, ready
}

/// A trip's state in its own vocabulary.
public enum TripStatus: Sendable, Equatable, Hashable, Encodable {
    case ride(TripState)
    case delivery(DeliveryStatus)

    /// The state's name as the API spells it (`driverAssigned`, `onTheWay`, ...).
    public var name: String {
        switch self {
        case .ride(let s): s.rawValue
        case .delivery(let s): s.rawValue
        }
    }

    /// True until the trip has finished one way or another.
    public var isActive: Bool {
        switch self {
        case .ride(let s): s.isActive
        case .delivery(let s): !s.isTerminal
        }
    }

    /// The state named `name` in `kind`'s machine; nil when that machine has no such state.
    ///
    /// Both machines have a `cancelled`, so a name alone never decides the machine: the trip's kind does.
    public init?(name: String, kind: TripKind) {
        switch kind {
        case .ride: guard let s = TripState(rawValue: name) else { return nil }; self = .ride(s)
        case .delivery: guard let s = DeliveryStatus(rawValue: name) else { return nil }; self = .delivery(s)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(name)
    }

    /// The states in which a trip without a provider is waiting for one: a searching ride, a delivery not yet taken.
    public static let waitingForProvider: [TripStatus] = [.ride(.searching), .delivery(.placed), .delivery(.picking)]

    /// The machine the state belongs to.
    public var kind: TripKind {
        switch self {
        case .ride: .ride
        case .delivery: .delivery
        }
    }

    /// `waitingForProvider` as an SQL condition over a `trips` row's `kind`, `status` and `provider_id` columns, for
    /// the
    /// stores that decide an offer in the transaction that reads the trip.
    public static let waitingForProviderSQL: String = {
        let states = waitingForProvider.map { "(kind = '\($0.kind.rawValue)' AND status = '\($0.name)')" }
        return "provider_id IS NULL AND (" + states.joined(separator: " OR ") + ")"
    }()
}

/// The provider's latest kept position on the trip.
public struct ProviderFix: Codable, Sendable, Equatable {
    public var coordinate: Coordinate
    public var heading: Double
    public var speed: Double
    public var recordedAt: Date
    /// Grows with every fix kept for this trip (and when a new road route changes the ETA shown with the same fix).
    public var seq: Int64
    /// The fix placed on the road the provider is following, shown to customers; nil when off it or unknown
    /// (`coordinate`, the raw fix, is what the path store keeps for disputes).
    public var snapped: Coordinate?
    public init(
        coordinate: Coordinate, heading: Double, speed: Double, recordedAt: Date, seq: Int64, snapped: Coordinate? = nil
    ) {
        self.coordinate = coordinate; self.heading = heading; self.speed = speed; self.recordedAt = recordedAt;
        self.seq = seq
        self.snapped = snapped
    }

    /// Where customers are shown the provider: on the road when snapped, the raw fix otherwise.
    public var shown: Coordinate { snapped ?? coordinate }
}

/// Who ended the trip and why.
public struct Cancellation: Codable, Sendable, Equatable {
    public var by: Party
    public var reason: String
    public init(by: Party, reason: String) { self.by = by; self.reason = reason }
}

/// A tip the customer gave after the trip: charged on its own, off-session.
public struct TripTip: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable { case pending, charged, failed }
    public var amount: Money
    public var state: State
    public var givenAt: Date
    public var intentId: String?
    public var decline: GatewayDecline?
    public init(amount: Money, state: State = .pending, givenAt: Date) {
        self.amount = amount; self.state = state; self.givenAt = givenAt
    }
}

/// One party's rating of the other after a trip.
public struct TripRating: Codable, Sendable, Equatable {
    /// Who rated: `customer` rates the provider, `provider` rates the customer.
    public let by: Party
    public let stars: Int
    public let comment: String?
    public let at: Date
    public init(by: Party, stars: Int, comment: String?, at: Date) {
        self.by = by; self.stars = stars; self.comment = comment; self.at = at
    }
}

/// The backend's one record of a trip; every change bumps `version`.
public struct TripRecord: Codable, Sendable, Equatable, Identifiable {
    public let id: String
    public let kind: TripKind
    public var version: Int
    public var status: TripStatus
    public var customerId: String
    public var providerId: String?
    public var merchantId: String?
    public var pickup: Coordinate
    public var dropoff: Coordinate
    /// Rides: the product asked for ("economy", "xl").
    public var productID: String?
    /// Deliveries: the basket.
    public var items: [OrderItem]?
    public var merchantStep: MerchantStep?
    /// Deliveries: when the merchant said the goods would be ready.
    public var readyAt: Date?
    /// A non-terminal problem the server reports over the status ("Rider delayed").
    public var problem: String?
    public var cancellation: Cancellation?
    public var providerFix: ProviderFix?
    /// Arrival window at the current target (pickup, then destination), as absolute times.
    public var etaEarliest: Date?
    public var etaLatest: Date?
    /// The price quoted before confirming (filled by the pricing issue).
    public var quote: Money?
    /// The final price (filled by the pricing issue).
    public var fare: Money?
    /// The quote the trip was confirmed on.
    public var quoteId: String?
    /// The quoted price line by line (`quote` is its total), and the rule it was priced under.
    public var quotedPrice: PriceBreakdown?
    /// Rides: the quote's busy-time multiplier, which a price measured after the trip keeps.
    public var demand: Double?
    /// The final price line by line, once the trip ended (`fare` is its total).
    public var finalPrice: PriceBreakdown?
    /// The payment attached to the trip: its own machine and version.
    public var payment: TripPayment?
    /// Deliveries: items the merchant marked missing or replaced before ready.
    public var basketChanges: [Pricing.BasketChange]?
    /// The customer's tip, once given.
    public var tip: TripTip?
    /// One rating per party.
    public var ratings: [TripRating]?
    /// Deliveries: the ActivityKit push token the customer's app registered.
    public var liveActivityToken: String?
    /// Deliveries: the upload the `delivered` step named as its proof, written by that step's own transaction.
    public var proofId: String?
    /// Metres of road the provider's kept path matched onto, set after completion when a road network is configured.
    public var matchedDistanceMeters: Double?
    /// Seconds of driving along the matched path at the router's speeds, set with `matchedDistanceMeters`.
    public var matchedDurationSeconds: Double?
    /// The city (partition) the trip belongs to: the one whose area holds its pickup, set at creation.
    public var city: String?
    /// A trip booked ahead: when the provider is due at the pickup.
    public var scheduledFor: Date?
    /// A trip booked ahead: when its search began (the hold on the card is placed then); nil until then.
    public var matchingStartedAt: Date?
    /// Deliveries: while the courier carries this order with others, the stops left over all of them in the order it
    /// drives them (the same list on each); nil for an order carried alone.
    public var stops: [PlannedStop]?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: String, kind: TripKind, status: TripStatus, customerId: String, pickup: Coordinate, dropoff: Coordinate,
        createdAt: Date
    ) {
        self.id = id; self.kind = kind; self.version = 1; self.status = status; self.customerId = customerId
        self.pickup = pickup; self.dropoff = dropoff; self.createdAt = createdAt; self.updatedAt = createdAt
    }

    /// Decodes the status in the machine of the record's own kind (a delivery's `cancelled` stays a delivery's).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        kind = try c.decode(TripKind.self, forKey: .kind)
        version = try c.decode(Int.self, forKey: .version)
        let name = try c.decode(String.self, forKey: .status)
        guard let status = TripStatus(name: name, kind: kind) else {
            throw DecodingError.dataCorruptedError(
                forKey: .status, in: c, debugDescription: "\(name) is not a \(kind.rawValue) state")
        }
        self.status = status
        customerId = try c.decode(String.self, forKey: .customerId)
        providerId = try c.decodeIfPresent(String.self, forKey: .providerId)
        merchantId = try c.decodeIfPresent(String.self, forKey: .merchantId)
        pickup = try c.decode(Coordinate.self, forKey: .pickup)
        dropoff = try c.decode(Coordinate.self, forKey: .dropoff)
        productID = try c.decodeIfPresent(String.self, forKey: .productID)
        items = try c.decodeIfPresent([OrderItem].self, forKey: .items)
        merchantStep = try c.decodeIfPresent(MerchantStep.self, forKey: .merchantStep)
        readyAt = try c.decodeIfPresent(Date.self, forKey: .readyAt)
        problem = try c.decodeIfPresent(String.self, forKey: .problem)
        cancellation = try c.decodeIfPresent(Cancellation.self, forKey: .cancellation)
        providerFix = try c.decodeIfPresent(ProviderFix.self, forKey: .providerFix)
        etaEarliest = try c.decodeIfPresent(Date.self, forKey: .etaEarliest)
        etaLatest = try c.decodeIfPresent(Date.self, forKey: .etaLatest)
        quote = try c.decodeIfPresent(Money.self, forKey: .quote)
        fare = try c.decodeIfPresent(Money.self, forKey: .fare)
        quoteId = try c.decodeIfPresent(String.self, forKey: .quoteId)
        quotedPrice = try c.decodeIfPresent(PriceBreakdown.self, forKey: .quotedPrice)
        demand = try c.decodeIfPresent(Double.self, forKey: .demand)
        finalPrice = try c.decodeIfPresent(PriceBreakdown.self, forKey: .finalPrice)
        payment = try c.decodeIfPresent(TripPayment.self, forKey: .payment)
        basketChanges = try c.decodeIfPresent([Pricing.BasketChange].self, forKey: .basketChanges)
        tip = try c.decodeIfPresent(TripTip.self, forKey: .tip)
        ratings = try c.decodeIfPresent([TripRating].self, forKey: .ratings)
        liveActivityToken = try c.decodeIfPresent(String.self, forKey: .liveActivityToken)
        proofId = try c.decodeIfPresent(String.self, forKey: .proofId)
        matchedDistanceMeters = try c.decodeIfPresent(Double.self, forKey: .matchedDistanceMeters)
        matchedDurationSeconds = try c.decodeIfPresent(Double.self, forKey: .matchedDurationSeconds)
        city = try c.decodeIfPresent(String.self, forKey: .city)
        scheduledFor = try c.decodeIfPresent(Date.self, forKey: .scheduledFor)
        matchingStartedAt = try c.decodeIfPresent(Date.self, forKey: .matchingStartedAt)
        stops = try c.decodeIfPresent([PlannedStop].self, forKey: .stops)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
        updatedAt = try c.decode(Date.self, forKey: .updatedAt)
    }

    /// True when `account` is one of the trip's parties, or ops.
    public func isVisible(to account: Account) -> Bool {
        switch account.role {
        case .ops, .backend: true
        case .customer: customerId == account.id
        case .provider: providerId == account.id
        case .merchant: merchantId == account.id
        }
    }

    /// The party role `account` plays on this trip, if any.
    public func party(of account: Account) -> Party? {
        isVisible(to: account) ? account.role : nil
    }
}

extension TripRecord {
    /// True while the trip is waiting for a provider: a searching ride, or a delivery without a courier.
    public var waitsForProvider: Bool { providerId == nil && TripStatus.waitingForProvider.contains(status) }

    /// True for a trip booked ahead whose search has not begun: it holds no hold and counts in no demand.
    public var isBookedAhead: Bool { scheduledFor != nil && matchingStartedAt == nil && status.isActive }
}
