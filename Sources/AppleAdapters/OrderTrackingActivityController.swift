#if canImport(ActivityKit)
import ActivityKit
import Foundation
import OrderTracking

/// The lock-screen card's static attributes and the content both writers (app and server push) fill in.
struct OrderTrackingActivityAttributes: ActivityAttributes {
    struct ContentState: Codable, Hashable {
        /// The wire status name ("arriving").
        var status: String
        /// Unix seconds, as the server's push sends it.
        var etaLatest: Int?
        var riderFirstName: String?
    }

    let orderID: String
}

/// `ActivityController` over ActivityKit: one activity per order, push-token updates. No logic.
@MainActor
final class OrderTrackingActivityController: ActivityController {
    private typealias OrderActivity = Activity<OrderTrackingActivityAttributes>

    var areActivitiesEnabled: Bool { ActivityAuthorizationInfo().areActivitiesEnabled }

    func runningActivities() -> Set<OrderID> {
        Set(OrderActivity.activities.filter { $0.activityState == .active || $0.activityState == .stale }
            .map { OrderID($0.attributes.orderID) })
    }

    func start(_ order: OrderID, content: LiveActivityContent) throws {
        _ = try OrderActivity.request(attributes: .init(orderID: order.rawValue), content: Self.content(content), pushType: .token)
    }

    func update(_ order: OrderID, content: LiveActivityContent, timestamp: Date) async {
        guard let activity = activity(order) else { return }
        if #available(iOS 17.2, *) {
            await activity.update(Self.content(content), alertConfiguration: nil, timestamp: timestamp)
        } else {
            await activity.update(Self.content(content))
        }
    }

    func end(_ order: OrderID, content: LiveActivityContent, timestamp: Date) async {
        guard let activity = activity(order) else { return }
        if #available(iOS 17.2, *) {
            await activity.end(Self.content(content), dismissalPolicy: .default, timestamp: timestamp)
        } else {
            await activity.end(Self.content(content), dismissalPolicy: .default)
        }
    }

    func pushTokens(for order: OrderID) -> AsyncStream<Data> {
        let activity = activity(order)
        return AsyncStream { continuation in
            let watcher = Task {
                if let activity { for await token in activity.pushTokenUpdates { continuation.yield(token) } }
                continuation.finish()
            }
            continuation.onTermination = { _ in watcher.cancel() }
        }
    }

    private func activity(_ order: OrderID) -> OrderActivity? {
        OrderActivity.activities.first { $0.attributes.orderID == order.rawValue }
    }

    private static func content(_ content: LiveActivityContent) -> ActivityContent<OrderTrackingActivityAttributes.ContentState> {
        let status = switch content.status {
        case .placed: "placed"
        case .picking: "picking"
        case .onTheWay: "onTheWay"
        case .arriving: "arriving"
        case .delivered: "delivered"
        case .cancelled: "cancelled"
        case .problem: "problem"
        }
        let state = OrderTrackingActivityAttributes.ContentState(
            status: status, etaLatest: content.eta.map { Int($0.upperBound.timeIntervalSince1970) },
            riderFirstName: content.riderFirstName)
        return ActivityContent(state: state, staleDate: content.staleDate)
    }
}
#endif
