import Foundation
import EnRouteModels

enum Fixtures {
    static let pickup = Coordinate(lat: 60.1699, lng: 24.9384)
    static let dropoff = Coordinate(lat: 60.1841, lng: 24.9500)
    static let request = TripRequest(pickup: pickup, dropoff: dropoff, productID: "economy")
    static let driver = Driver(
        id: "D-1", name: "Mehmet", carModel: "Toyota Prius", plate: "ABC-123", rating: 4.9,
        photoURL: URL(string: "https://cdn.example.com/d1.jpg")!)
    static let time = Date(timeIntervalSince1970: 1_792_520_000)

    static func trip(_ state: TripState = .searching, version: Int = 1, id: String = "T-1", eta: Int? = nil) -> Trip {
        Trip(
            id: id, state: state, pickup: pickup, dropoff: dropoff,
            driver: state == .searching ? nil : driver, etaSeconds: eta, version: version)
    }

    static func location(
        seq: Int64, lat: Double = 60.17, lng: Double = 24.94, heading: Double = 0, eta: Int? = nil
    ) -> DriverLocation {
        DriverLocation(
            coordinate: Coordinate(lat: lat, lng: lng), heading: heading, timestamp: time, seq: seq,
            etaSeconds: eta, etaLatest: eta.map { time.addingTimeInterval(TimeInterval($0)) })
    }

    /// Deterministic idempotency keys: 00000000-0000-0000-0000-000000000001, ...2, ...
    static func key(_ n: Int) -> UUID {
        let hex = String(n, radix: 16)
        return UUID(uuidString: "00000000-0000-0000-0000-" + String(repeating: "0", count: 12 - hex.count) + hex)!
    }
}

/// A failure the fakes throw when a test asks them to fail.
struct FakeError: Error, Equatable {
    var reason = "scripted failure"
}

extension Fixtures {
    static func eur(_ minor: Int) -> Money { Money(amountMinor: minor, currency: "EUR") }

    /// An economy quote for `fare` cents, running out `expiresIn` seconds after `time`.
    static func quote(
        _ id: String, fare: Int, product: String = "economy", expiresIn: TimeInterval = 300, from start: Date = time
    ) -> Estimate {
        Estimate(
            productID: product, fare: eur(fare), etaSeconds: 180, quoteId: id,
            expiresAt: start.addingTimeInterval(expiresIn))
    }

    static let visa = PaymentMethodSummary(
        id: "pm-1", brand: "visa", last4: "4242", expMonth: 12, expYear: 2030, isDefault: true)
    static let mastercard = PaymentMethodSummary(
        id: "pm-2", brand: "mastercard", last4: "4444", expMonth: 6, expYear: 2031, isDefault: false)

    static func receipt(tripID: String = "T-1", tip: Int? = nil) -> Receipt {
        var lines = [
            PriceLine(kind: "base", label: "Base fare", amount: eur(300)),
            PriceLine(kind: "distance", label: "Distance 4.2 km", amount: eur(630)),
            PriceLine(kind: "time", label: "Time 11 min", amount: eur(320)),
        ]
        if let tip { lines.append(PriceLine(kind: "tip", label: "Tip", amount: eur(tip))) }
        return Receipt(
            tripId: tripID, kind: "ride", payment: .captured, lines: lines, total: eur(1250 + (tip ?? 0)),
            card: CardSummary(brand: "visa", last4: "4242"), requestedAt: time, startedAt: time.addingTimeInterval(300),
            endedAt: time.addingTimeInterval(960), route: nil)
    }

    static func snapshot(_ id: String) -> TripSnapshot {
        TripSnapshot(
            id: id, kind: "ride", version: 7, status: "completed", problem: nil, pickup: pickup, dropoff: dropoff,
            providerId: "p1", merchantId: nil, merchantStep: nil, readyAt: nil, items: nil, productID: "economy",
            etaEarliest: nil, etaLatest: nil, cancelledBy: nil, cancelReason: nil, createdAt: time, updatedAt: time)
    }

    static func problem(
        _ type: String, status: Int = 402, detail: String = "Refused.", declineCode: String? = nil,
        nextStep: String? = nil,
        actionURL: URL? = nil, amount: Money? = nil
    ) -> PaymentProblem {
        PaymentProblem(
            type: type, title: "Payment refused", status: status, detail: detail, declineCode: declineCode,
            nextStep: nextStep, actionURL: actionURL, amount: amount)
    }
}
