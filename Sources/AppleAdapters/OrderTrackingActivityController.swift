// iOS only: ActivityKit behind the order tracking kit's ActivityController. No logic.
#if canImport(ActivityKit) && os(iOS) && !targetEnvironment(macCatalyst)
@preconcurrency import ActivityKit
public import Foundation
public import OrderTracking
import OrderTrackingActivity

/// `ActivityController` over ActivityKit: one Live Activity per order, updated by the app and by the server's
/// pushes (its token goes to the server). Needs `NSSupportsLiveActivities` and a widget extension that draws
/// `OrderTrackingActivityAttributes`. No logic.
@MainActor
public final class OrderTrackingActivityController: ActivityController {
    private typealias OrderActivity = Activity<OrderTrackingActivityAttributes>

    /// A controller over this app's delivery Live Activities.
    public init() {}

    /// False when the person turned Live Activities off for the app.
    public var areActivitiesEnabled: Bool { ActivityAuthorizationInfo().areActivitiesEnabled }

    /// Orders whose Live Activity is on screen now (active or stale).
    public func runningActivities() -> Set<OrderID> {
        Set(
            OrderActivity.activities.filter { $0.activityState == .active || $0.activityState == .stale }
                .map { OrderID($0.attributes.orderID) })
    }

    /// Starts the order's Live Activity, updated by push-token pushes as well as by the app.
    public func start(_ order: OrderID, content: LiveActivityContent) throws {
        _ = try OrderActivity.request(
            attributes: OrderTrackingActivityAttributes(orderID: order.rawValue),
            content: Self.content(content), pushType: .token)
    }

    /// Shows `content`; the system ignores it when `timestamp` is older than what it shows (iOS 17.2 and later).
    public func update(_ order: OrderID, content: LiveActivityContent, timestamp: Date) async {
        guard let activity = runningActivity(order) else { return }
        if #available(iOS 17.2, *) {
            await activity.update(Self.content(content), alertConfiguration: nil, timestamp: timestamp)
        } else {
            await activity.update(Self.content(content))
        }
    }

    /// Ends the order's Live Activity with its final content.
    public func end(_ order: OrderID, content: LiveActivityContent, timestamp: Date) async {
        guard let activity = runningActivity(order) else { return }
        if #available(iOS 17.2, *) {
            await activity.end(Self.content(content), dismissalPolicy: .default, timestamp: timestamp)
        } else {
            await activity.end(Self.content(content), dismissalPolicy: .default)
        }
    }

    /// The activity's push tokens: the current one first, when there is one, then every change.
    public func pushTokens(for order: OrderID) -> AsyncStream<Data> {
        guard let activity = runningActivity(order) else { return AsyncStream { $0.finish() } }
        let current = activity.pushToken
        return AsyncStream { continuation in
            if let current { continuation.yield(current) }
            let watcher = Task {
                for await token in activity.pushTokenUpdates { continuation.yield(token) }
                continuation.finish()
            }
            continuation.onTermination = { _ in watcher.cancel() }
        }
    }

    private func runningActivity(_ order: OrderID) -> OrderActivity? {
        OrderActivity.activities.first { $0.attributes.orderID == order.rawValue }
    }

    private static func content(_ content: LiveActivityContent) -> ActivityContent<OrderActivity.ContentState> {
        ActivityContent(state: content.contentState, staleDate: content.staleDate)
    }
}
#endif
