import AppleAdapters
import Foundation
import NotificationsKit

/// The app delegate: owns the composition root, and gives the notification engine to the adapter before launch
/// finishes.
final class RiderAppDelegate: NotificationAppDelegate {
    /// Everything the app is made of, built once, on first use (at launch).
    lazy var dependencies = RiderDependencies(configuration: .from(Bundle.main))

    override func makeEngine() -> NotificationEngine? { dependencies.engine }
}
