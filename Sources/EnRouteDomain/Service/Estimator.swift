public import Foundation
public import EnRouteModels

/// Arrival windows and prices: `StraightLineEstimator` without a road network, `RoadEstimator` with one.
public protocol TripEstimator: Sendable {
    /// The trip with `etaEarliest`/`etaLatest` set for its current target, or cleared when none applies. Runs inside
    /// transactions and under the service's lock on every fix: it must not wait.
    func refreshETA(_ trip: TripRecord, now: Date) -> TripRecord
    /// Prices and pickup times before a request, without asking anything that may wait.
    func estimates(pickup: Coordinate, dropoff: Coordinate) -> [Estimate]
    /// Prices and pickup times before a request, from the roads when there are any; `TripError.invalid` names a
    /// pickup or drop-off no road is near.
    func roadEstimates(pickup: Coordinate, dropoff: Coordinate, departure: Date) async throws(TripError) -> [Estimate]
    /// The leg a quote is priced on: road distance and time from pickup to drop-off (a straight line without roads) and
    /// the
    /// wait for the nearest provider; `TripError.invalid` names a pickup or drop-off no road is near.
    func quoteLeg(pickup: Coordinate, dropoff: Coordinate, departure: Date) async throws(TripError) -> QuoteLeg
    /// Throws `TripError.invalid` at `pointer` when a road network is configured and no road is near `coordinate`.
    func checkCovered(_ coordinate: Coordinate, pointer: String) async throws(TripError)
    /// Calls `listener` with a trip's id when a new road route changed what `refreshETA` would say for it.
    func onRouteChange(_ listener: @escaping @Sendable (String) async -> Void)
    /// Sees every committed change of a trip (after the commit, must not block): completed legs feed the error model.
    func tripCommitted(from old: TripRecord?, to new: TripRecord, at: Date)
    /// Products a ride may be requested for.
    var products: [String] { get }
}

extension TripEstimator {
    public func roadEstimates(
        pickup: Coordinate, dropoff: Coordinate, departure: Date
    ) async throws(TripError) -> [Estimate] {
        estimates(pickup: pickup, dropoff: dropoff)
    }
    public func checkCovered(_ coordinate: Coordinate, pointer: String) async throws(TripError) {}
    public func quoteLeg(pickup: Coordinate, dropoff: Coordinate, departure: Date) async throws(TripError) -> QuoteLeg {
        let line = StraightLineEstimator()
        return QuoteLeg(
            distanceMeters: StraightLineEstimator.distance(pickup, dropoff) * line.detour,
            durationSeconds: line.travel(pickup, dropoff),
            pickupWaitSeconds: line.pickupWait)
    }
    public func onRouteChange(_ listener: @escaping @Sendable (String) async -> Void) {}
    public func tripCommitted(from old: TripRecord?, to new: TripRecord, at: Date) {}
}

/// Great-circle distance and a city speed: the estimator without a road network, and `RoadEstimator`'s fallback.
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
    /// The least time a window shows while the provider has not arrived: never "0 min".
    public var minimumETA: TimeInterval = 60

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

    /// Seconds from `here` to the trip's next own stop `target`, through other orders' stops first when the courier
    /// carries several.
    func approach(_ here: Coordinate, to target: Coordinate, of trip: TripRecord) -> TimeInterval {
        guard let a = trip.stackedApproach else { return travel(here, target) }
        return travel(here, a.first) + a.after + Double(a.stops) * StopPlanner.stopSeconds
    }

    /// When the provider was where `fix` says: its recorded time, not when it reached the server (a batch queued in a
    /// dead zone), believed back to `fixAgeCounted` before now (a phone's clock may be off); now without a fix.
    public static func departure(from fix: ProviderFix?, now: Date) -> Date {
        fix.map { min(now, max($0.recordedAt, now.addingTimeInterval(-fixAgeCounted))) } ?? now
    }

    /// The oldest a fix's time is believed, in seconds before now.
    public static let fixAgeCounted: TimeInterval = 120

    public func refreshETA(_ trip: TripRecord, now: Date) -> TripRecord {
        var trip = trip
        let here = trip.providerFix?.coordinate
        let departed = Self.departure(from: trip.providerFix, now: now)
        var window: (start: Date, seconds: TimeInterval)?
        switch trip.status {
        case .ride(.driverAssigned):
            if let here { window = (departed, travel(here, trip.pickup)) }
        case .ride(.onTrip):
            window = (here == nil ? now : departed, travel(here ?? trip.pickup, trip.dropoff))
        case .delivery(.placed), .delivery(.picking):
            let ready = max(now, trip.readyAt ?? now.addingTimeInterval(defaultPreparation))
            let courierAtMerchant = here.map { departed.addingTimeInterval(approach($0, to: trip.pickup, of: trip)) }
            let ride = trip.stackedRide.map { $0.seconds + Double($0.stops) * StopPlanner.stopSeconds }
            window = (max(ready, courierAtMerchant ?? ready), ride ?? travel(trip.pickup, trip.dropoff))
        case .delivery(.onTheWay), .delivery(.arriving):
            window = (
                here == nil ? now : departed,
                here.map { approach($0, to: trip.dropoff, of: trip) } ?? travel(trip.pickup, trip.dropoff)
            )
        default:
            window = nil
        }
        if let window {
            let earliest = window.start.addingTimeInterval(window.seconds * 0.85)
            let latest = window.start.addingTimeInterval(window.seconds * 1.25 + 120)
            // Never before the fix it rests on, and never "0 min" while the provider has not arrived: the latest end
            // is at least `minimumETA` ahead. The earliest end is not pushed out: a provider seconds away may arrive
            // now.
            let floor = now.addingTimeInterval(minimumETA)
            trip.etaEarliest = Date(timeIntervalSince1970: max(earliest, departed).timeIntervalSince1970.rounded())
            trip.etaLatest = Date(timeIntervalSince1970: max(latest, floor).timeIntervalSince1970.rounded(.up))
        } else {
            trip.etaEarliest = nil
            trip.etaLatest = nil
        }
        return trip
    }

    public func estimates(pickup: Coordinate, dropoff: Coordinate) -> [Estimate] {
        Self.fares(
            km: Self.distance(pickup, dropoff) * detour / 1000, minutes: travel(pickup, dropoff) / 60,
            pickupWait: pickupWait, currency: currency)
    }

    /// The products' prices for a trip of `km` and `minutes`, with `pickupWait` seconds until a car arrives.
    public static func fares(km: Double, minutes: Double, pickupWait: Int, currency: String) -> [Estimate] {
        let economy = Int((300 + 110 * km + 25 * minutes).rounded())
        return [
            Estimate(
                productID: "economy", fare: Money(amountMinor: economy, currency: currency), etaSeconds: pickupWait),
            Estimate(
                productID: "xl", fare: Money(amountMinor: Int((Double(economy) * 1.6).rounded()), currency: currency),
                etaSeconds: pickupWait + 120),
        ]
    }
}
