public import Foundation

/// A delivery's customer-facing status on the wire.
public enum OrderStatusWire: String, Codable, Sendable, CaseIterable {
    case placed, picking, onTheWay, arriving, delivered, cancelled, problem
}

/// `GET /v1/orders/{id}/tracking`, exactly as the order tracker reads it.
///
/// `problem` carries the message of a `problem` status and the reason of a `cancelled` one; null otherwise.
public struct TrackingDTO: Codable, Sendable, Equatable {
    /// An arrival window as absolute times.
    public struct ETA: Codable, Sendable, Equatable {
        public let earliest: Date
        public let latest: Date
        public init(earliest: Date, latest: Date) { self.earliest = earliest; self.latest = latest }
    }

    /// The rider's latest fix with her first name.
    public struct Rider: Codable, Sendable, Equatable {
        public let firstName: String
        public let lat: Double
        public let lng: Double
        public let recordedAt: Date
        public init(firstName: String, lat: Double, lng: Double, recordedAt: Date) {
            self.firstName = firstName; self.lat = lat; self.lng = lng; self.recordedAt = recordedAt
        }
    }

    public let orderId: String
    public let version: Int
    public let status: OrderStatusWire
    public let problem: String?
    public let eta: ETA?
    public let rider: Rider?
    public let destination: Coordinate
    public let generatedAt: Date
    /// While a courier has the order: how many stops for other orders it makes before handing this one over ("1 stop
    /// before yours"); absent before a courier has it and after it ended.
    public let stopsBefore: Int?

    public init(
        orderId: String, version: Int, status: OrderStatusWire, problem: String?, eta: ETA?, rider: Rider?,
        destination: Coordinate, generatedAt: Date, stopsBefore: Int? = nil
    ) {
        self.orderId = orderId; self.version = version; self.status = status; self.problem = problem
        self.eta = eta; self.rider = rider; self.destination = destination; self.generatedAt = generatedAt
        self.stopsBefore = stopsBefore
    }

    enum CodingKeys: String, CodingKey {
        case orderId, version, status, problem, eta, rider, destination, generatedAt, stopsBefore
    }

    // Encodes `problem`, `eta` and `rider` as explicit nulls, as the seed's JSON does.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(orderId, forKey: .orderId)
        try c.encode(version, forKey: .version)
        try c.encode(status, forKey: .status)
        try c.encode(problem, forKey: .problem)
        try c.encode(eta, forKey: .eta)
        try c.encode(rider, forKey: .rider)
        try c.encode(destination, forKey: .destination)
        try c.encode(generatedAt, forKey: .generatedAt)
        try c.encodeIfPresent(stopsBefore, forKey: .stopsBefore)
    }
}

/// `GET /v1/orders/active` → `{"orders": [<tracking>]}`.
public struct ActiveOrdersDTO: Codable, Sendable, Equatable {
    public let orders: [TrackingDTO]
    public init(orders: [TrackingDTO]) { self.orders = orders }
}

/// `PUT /v1/orders/{id}/live-activity-token` body: the ActivityKit push token as hex.
public struct LiveActivityTokenRequest: Codable, Sendable, Equatable {
    public let token: String
    public init(token: String) { self.token = token }
}

/// One line of a basket.
public struct OrderItem: Codable, Sendable, Equatable {
    public let sku: String
    public let quantity: Int
    public init(sku: String, quantity: Int) { self.sku = sku; self.quantity = quantity }
}

/// `POST /v1/orders` body: a basket from one merchant to one destination.
public struct PlaceOrderRequest: Codable, Sendable, Equatable {
    public let merchantId: String
    public let items: [OrderItem]
    public let destination: Coordinate
    /// The `quoteId` of the basket's quote (`POST /v1/orders/quote`).
    public let quoteId: String?
    /// Books the order ahead: when the courier should collect it from the merchant, 15 minutes to 7 days from now;
    /// the quote must have been asked for the same time.
    public let scheduledFor: Date?
    public init(
        merchantId: String, items: [OrderItem], destination: Coordinate, quoteId: String? = nil,
        scheduledFor: Date? = nil
    ) {
        self.merchantId = merchantId; self.items = items; self.destination = destination; self.quoteId = quoteId
        self.scheduledFor = scheduledFor
    }
}
