import Foundation
import Synchronization
import HTTPTransport
import EnRouteModels

/// Canned answers shaped like the seed's endpoints, for tests that go through the real repository.
enum FlowServer {
    static let server = APIServer(
        baseURL: URL(string: "https://api.enroute.test")!, credentials: StaticAccessToken("T"))

    static func trackingJSON(order: String = "8F3K", version: Int, status: String, problem: String? = nil) -> String {
        """
        { "orderId": "\(order)", "version": \(version), "status": "\(status)",
          "problem": \(problem.map { "\"\($0)\"" } ?? "null"),
          "eta": { "earliest": "2026-10-20T18:42:00Z", "latest": "2026-10-20T18:46:00Z" },
          "rider": { "firstName": "Ana", "lat": 52.52, "lng": 13.40, "recordedAt": "2026-10-20T18:37:55Z" },
          "destination": { "lat": 52.53, "lng": 13.41 },
          "generatedAt": "2026-10-20T18:38:00Z" }
        """
    }

    static func tracking(
        order: String = "8F3K", version: Int, status: String, problem: String? = nil
    ) -> HTTPClientResponse {
        HTTPClientResponse(
            status: 200, headers: ["Content-Type": "application/json"],
            body: Data(trackingJSON(order: order, version: version, status: status, problem: problem).utf8))
    }
}

/// A thread-safe counter for fakes.
final class Counter: Sendable {
    private let value = Mutex(0)
    /// Adds one and returns the new count.
    func next() -> Int {
        value.withLock {
            $0 += 1; return $0
        }
    }
    var current: Int { value.withLock { $0 } }
}
