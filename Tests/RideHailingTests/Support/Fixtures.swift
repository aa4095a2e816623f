import Foundation
import EnRouteModels

enum Fixtures {
    static let pickup = Coordinate(lat: 60.1699, lng: 24.9384)
    static let dropoff = Coordinate(lat: 60.1841, lng: 24.9500)
    static let request = TripRequest(pickup: pickup, dropoff: dropoff, productID: "economy")
    static let driver = Driver(id: "D-1", name: "Mehmet", carModel: "Toyota Prius", plate: "ABC-123", rating: 4.9,
                               photoURL: URL(string: "https://cdn.example.com/d1.jpg")!)
    static let time = Date(timeIntervalSince1970: 1_792_520_000)

    static func trip(_ state: TripState = .searching, version: Int = 1, id: String = "T-1", eta: Int? = nil) -> Trip {
        Trip(id: id, state: state, pickup: pickup, dropoff: dropoff,
             driver: state == .searching ? nil : driver, etaSeconds: eta, version: version)
    }

    static func location(seq: Int64, lat: Double = 60.17, lng: Double = 24.94, heading: Double = 0, eta: Int? = nil) -> DriverLocation {
        DriverLocation(coordinate: Coordinate(lat: lat, lng: lng), heading: heading, timestamp: time, seq: seq,
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
