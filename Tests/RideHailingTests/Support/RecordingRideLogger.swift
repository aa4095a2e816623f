import Synchronization
@testable import RideHailing

/// Keeps every warning so a test can check it.
final class RecordingRideLogger: RideLogger {
    private let stored = Mutex<[String]>([])

    func warning(_ message: String) { stored.withLock { $0.append(message) } }
    var warnings: [String] { stored.withLock { $0 } }
}
