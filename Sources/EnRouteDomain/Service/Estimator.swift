public import Foundation
public import EnRouteModels

/// Arrival windows and prices; straight-line today, road routing later behind the same protocol.
public protocol TripEstimator: Sendable {
    /// The trip with `etaEarliest`/`etaLatest` set for its current target, or cleared when none applies.
    func refreshETA(_ trip: TripRecord, now: Date) -> TripRecord
    /// Prices and pickup times before a request.
    func estimates(pickup: Coordinate, dropoff: Coordinate) -> [Estimate]
    /// Products a ride may be requested for.
    var products: [String] { get }
}

/// Great-circle distance and a city speed: honest ranges until the routing issue brings road ETAs.
public struct StraightLineEstimator: TripEstimator {
    /// Metres per second along roads (about 29 km/h).
    public var speed = 8.0
    /// Roads are longer than the straight line.
    public var detour = 1.3
    /// Preparation assumed before a merchant states one.
    public var defaultPreparation: TimeInterval = 15 * 60
    public var currency = "EUR"
    /// Wait for a car before one is assigned.
    public var pickupWait = 300

    public init() {}

    public var products: [String] { ["economy", "xl"] }

    /// Metres between two points on a sphere of the Earth's mean radius.
    public static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        let r = 6_371_000.0, rad = Double.pi / 180
        let dLat = (b.lat - a.lat) * rad, dLng = (b.lng - a.lng) * rad
        let h = sin(dLat / 2) * sin(dLat / 2) + cos(a.lat * rad) * cos(b.lat * rad) * sin(dLng / 2) * sin(dLng / 2)
        return 2 * r * asin(min(1, sqrt(h)))
    }

    func travel(_ a: Coordinate, _ b: Coordinate) -> TimeInterval { Self.distance(a, b) * detour / speed }

    public func refreshETA(_ trip: TripRecord, now: Date) -> TripRecord {
        var trip = trip
        let here = trip.providerFix?.coordinate
        var window: (start: Date, seconds: TimeInterval)?
        switch trip.status {
        case .ride(.driverAssigned):
            if let here { window = (now, travel(here, trip.pickup)) }
        case .ride(.onTrip):
            window = (now, travel(here ?? trip.pickup, trip.dropoff))
        case .delivery(.placed), .delivery(.picking):
            let ready = max(now, trip.readyAt ?? now.addingTimeInterval(defaultPreparation))
            let courierAtMerchant = here.map { now.addingTimeInterval(travel($0, trip.pickup)) } ?? ready
            window = (max(ready, courierAtMerchant), travel(trip.pickup, trip.dropoff))
        case .delivery(.onTheWay), .delivery(.arriving):
            window = (now, travel(here ?? trip.pickup, trip.dropoff))
        default:
            window = nil
        }
        if let window {
            let earliest = window.start.addingTimeInterval(window.seconds * 0.85)
            let latest = window.start.addingTimeInterval(window.seconds * 1.25 + 120)
            trip.etaEarliest = Date(timeIntervalSince1970: earliest.timeIntervalSince1970.rounded())
            trip.etaLatest = Date(timeIntervalSince1970: latest.timeIntervalSince1970.rounded(.up))
        } else {
            trip.etaEarliest = nil
            trip.etaLatest = nil
        }
        return trip
    }

    public func estimates(pickup: Coordinate, dropoff: Coordinate) -> [Estimate] {
        let km = Self.distance(pickup, dropoff) * detour / 1000
        let minutes = travel(pickup, dropoff) / 60
        let economy = Int((300 + 110 * km + 25 * minutes).rounded())
        return [
            Estimate(productID: "economy", fare: Money(amountMinor: economy, currency: currency), etaSeconds: pickupWait),
            Estimate(productID: "xl", fare: Money(amountMinor: Int((Double(economy) * 1.6).rounded()), currency: currency),
                     etaSeconds: pickupWait + 120),
        ]
    }
}
