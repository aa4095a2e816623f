import Foundation
import Synchronization
import Testing
import HTTPTransport
import EnRouteModels
import ProviderKit
import TestSupport

enum Fixtures {
    static let pickup = Coordinate(lat: 60.1699, lng: 24.9384)
    static let dropoff = Coordinate(lat: 60.1841, lng: 24.9497)
    static let server = APIServer(baseURL: URL(string: "http://enroute.test")!, credentials: StaticAccessToken("token"))

    static func trip(
        _ id: String = "T1", kind: String = "ride", status: String = "driverAssigned", version: Int = 2,
        merchantStep: String? = nil, cancelledBy: String? = nil,
        at date: Date = Date(timeIntervalSince1970: 1_792_520_000)
    ) -> TripSnapshot {
        TripSnapshot(
            id: id, kind: kind, version: version, status: status, problem: nil, pickup: pickup, dropoff: dropoff,
            providerId: "p1", merchantId: kind == "delivery" ? "m1" : nil, merchantStep: merchantStep, readyAt: nil,
            items: nil,
            productID: kind == "ride" ? "economy" : nil, etaEarliest: nil, etaLatest: nil, cancelledBy: cancelledBy,
            cancelReason: nil, createdAt: date, updatedAt: date)
    }

    static func offer(expiresAt: Date) -> Offer {
        Offer(offerId: "O1", tripId: "T1", pickup: pickup, dropoff: dropoff, expiresAt: expiresAt)
    }

    static func fix(lat: Double = 60.1699, lng: Double = 24.9384, accuracy: Double = 5, at date: Date) -> LocationFix {
        LocationFix(lat: lat, lng: lng, heading: 0, speed: 10, accuracy: accuracy, recordedAt: date)
    }
}

/// Ids `prefix-1`, `prefix-2`, ... in order.
final class SequentialIDs: Sendable {
    private let next = Mutex(0)
    let prefix: String
    init(_ prefix: String) { self.prefix = prefix }
    func make() -> String { "\(prefix)-\(next.withLock { $0 += 1; return $0 })" }
    var maker: @Sendable () -> String { { self.make() } }
}

/// A fresh SQLite path in the temporary directory, removed with its WAL files on `remove()`.
struct TemporaryStorePath {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("provider-\(UUID().uuidString).sqlite")
        .path
    func remove() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
