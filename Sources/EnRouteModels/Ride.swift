public import Foundation

/// A point on the map, in degrees.
public struct Coordinate: Codable, Sendable, Equatable, Hashable {
    public let lat: Double
    public let lng: Double
    public init(lat: Double, lng: Double) { self.lat = lat; self.lng = lng }
    /// The same point with the names MapKit code writes (`Coordinate(latitude:longitude:)`).
    public init(latitude: Double, longitude: Double) { self.init(lat: latitude, lng: longitude) }

    /// True when both parts are finite and inside the globe's ranges.
    public var isValid: Bool { lat.isFinite && lng.isFinite && (-90...90).contains(lat) && (-180...180).contains(lng) }
}

/// The driver's position as the rider sees it; `seq` grows with each update.
public struct DriverLocation: Codable, Sendable, Equatable {
    public let coordinate: Coordinate
    /// Degrees, 0 = north.
    public let heading: Double
    public let timestamp: Date
    public let seq: Int64
    /// Seconds to the trip's next stop as the server computed them for this fix; absent from older servers.
    public let etaSeconds: Int?
    /// The same ETA as an absolute time (the latest arrival); absent from older servers.
    public let etaLatest: Date?
    /// A location; the ETA fields only when the server computed one for this fix.
    public init(
        coordinate: Coordinate, heading: Double, timestamp: Date, seq: Int64, etaSeconds: Int? = nil,
        etaLatest: Date? = nil
    ) {
        self.coordinate = coordinate; self.heading = heading; self.timestamp = timestamp; self.seq = seq
        self.etaSeconds = etaSeconds; self.etaLatest = etaLatest
    }
}

/// The assigned driver as shown to the rider.
public struct Driver: Codable, Sendable, Equatable {
    public let id, name, carModel, plate: String
    public let rating: Double
    public let photoURL: URL
    public init(id: String, name: String, carModel: String, plate: String, rating: Double, photoURL: URL) {
        self.id = id; self.name = name; self.carModel = carModel; self.plate = plate; self.rating = rating;
        self.photoURL = photoURL
    }
}

/// An amount in minor units; never a Double.
public struct Money: Codable, Sendable, Equatable, Hashable {
    /// Cents, or the currency's smallest unit.
    public let amountMinor: Int
    /// ISO 4217 code, e.g. "USD".
    public let currency: String
    public init(amountMinor: Int, currency: String) { self.amountMinor = amountMinor; self.currency = currency }
}

/// A ride's state.
public enum TripState: String, Codable, Sendable, CaseIterable {
    case searching, driverAssigned, driverArrived, onTrip
    case completed, cancelled, noDriversFound

    /// True until the ride reaches completed, cancelled or noDriversFound.
    public var isActive: Bool {
        switch self {
        case .searching, .driverAssigned, .driverArrived, .onTrip: true
        case .completed, .cancelled, .noDriversFound: false
        }
    }
}

/// The ride as the rider's app sees it.
public struct Trip: Codable, Sendable, Identifiable, Equatable {
    public let id: String
    public var state: TripState
    public let pickup: Coordinate
    public let dropoff: Coordinate
    public var driver: Driver?
    public var etaSeconds: Int?
    public var fare: Money?
    /// The server adds 1 on every change.
    public var version: Int
    /// A ride booked ahead: when the driver is due at the pickup (absent for a ride asked for now).
    public var scheduledFor: Date?
    /// A ride booked ahead: when its search for a driver began (absent until then).
    public var matchingStartedAt: Date?

    public init(
        id: String, state: TripState, pickup: Coordinate, dropoff: Coordinate, driver: Driver? = nil,
        etaSeconds: Int? = nil, fare: Money? = nil, version: Int, scheduledFor: Date? = nil,
        matchingStartedAt: Date? = nil
    ) {
        self.id = id; self.state = state; self.pickup = pickup; self.dropoff = dropoff
        self.driver = driver; self.etaSeconds = etaSeconds; self.fare = fare; self.version = version
        self.scheduledFor = scheduledFor; self.matchingStartedAt = matchingStartedAt
    }

    /// A ride booked ahead whose search for a driver has not begun.
    public var isBookedAhead: Bool { state == .searching && scheduledFor != nil && matchingStartedAt == nil }
}

/// What the rider asks for, naming the quote it accepts; the client never states an amount.
public struct TripRequest: Codable, Sendable, Equatable {
    public let pickup: Coordinate
    public let dropoff: Coordinate
    /// "economy", "xl", ...
    public let productID: String
    /// The `quoteId` of the estimate the rider confirmed (`POST /v1/estimates`).
    public let quoteId: String?
    /// Books the ride ahead: when the driver should be at the pickup, 15 minutes to 7 days from now; the estimate
    /// must have been asked for the same time.
    public let scheduledFor: Date?
    public init(
        pickup: Coordinate, dropoff: Coordinate, productID: String, quoteId: String? = nil, scheduledFor: Date? = nil
    ) {
        self.pickup = pickup; self.dropoff = dropoff; self.productID = productID; self.quoteId = quoteId
        self.scheduledFor = scheduledFor
    }
}

/// Body of `POST /v1/estimates`.
public struct EstimateRequest: Codable, Sendable, Equatable {
    public let pickup: Coordinate
    public let dropoff: Coordinate
    /// Prices a ride booked ahead for this time (15 minutes to 7 days from now) instead of one asked for now.
    public let scheduledFor: Date?
    public init(pickup: Coordinate, dropoff: Coordinate, scheduledFor: Date? = nil) {
        self.pickup = pickup; self.dropoff = dropoff; self.scheduledFor = scheduledFor
    }
}

/// One product's price and pickup time before a request, as a quote with an identity and a time limit.
public struct Estimate: Codable, Sendable, Equatable {
    public let productID: String
    public let fare: Money
    public let etaSeconds: Int
    /// The quote to name when requesting the ride; absent from servers without quotes.
    public var quoteId: String?
    /// After this the quote is refused (409 `quote-expired`, with a fresh one).
    public var expiresAt: Date?
    public init(productID: String, fare: Money, etaSeconds: Int, quoteId: String? = nil, expiresAt: Date? = nil) {
        self.productID = productID; self.fare = fare; self.etaSeconds = etaSeconds; self.quoteId = quoteId;
        self.expiresAt = expiresAt
    }
}

/// One message on a ride's live channel.
public enum TripEvent: Sendable, Equatable {
    case tripUpdated(Trip)
    case driverMoved(DriverLocation)

    /// The SSE `event:` name / WebSocket `type` for this event.
    public var name: String { eventName.rawValue }

    /// The live event name this event travels under.
    public var eventName: LiveEventName {
        switch self {
        case .tripUpdated: .tripUpdated
        case .driverMoved: .driverMoved
        }
    }

    /// The event's JSON payload (the Trip or the DriverLocation).
    public func payload() throws -> Data {
        let encoder = WireCoding.encoder()
        switch self {
        case .tripUpdated(let trip): return try encoder.encode(trip)
        case .driverMoved(let location): return try encoder.encode(location)
        }
    }

    /// Rebuilds an event from its name and JSON payload; nil for an unknown name.
    public static func decode(name: String, payload: Data) throws -> TripEvent? {
        let decoder = WireCoding.decoder()
        switch LiveEventName(rawValue: name) {
        case .tripUpdated: return .tripUpdated(try decoder.decode(Trip.self, from: payload))
        case .driverMoved: return .driverMoved(try decoder.decode(DriverLocation.self, from: payload))
        case .tracking, .offer, .offerWithdrawn, .accessEnded, nil: return nil
        }
    }
}

/// A WebSocket frame on the live channel: `{"type": "tripUpdated", "id": "7", "data": {...}}`.
public struct LiveEnvelope<Payload: Codable & Sendable>: Codable, Sendable {
    public let type: String
    public let id: String
    public let data: Payload
    public init(type: String, id: String, data: Payload) { self.type = type; self.id = id; self.data = data }
}
