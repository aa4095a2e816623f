public import Foundation

/// The Live Activity system (ActivityKit on iOS) as the engine needs it, one activity per order.
@MainActor
public protocol ActivityController: AnyObject {
    /// False when the user turned Live Activities off.
    var areActivitiesEnabled: Bool { get }
    /// Orders whose activity is running now.
    func runningActivities() -> Set<OrderID>
    /// Requests a new activity with push updates.
    func start(_ order: OrderID, content: LiveActivityContent) throws
    /// Updates a running activity; the system ignores a timestamp older than what it shows.
    func update(_ order: OrderID, content: LiveActivityContent, timestamp: Date) async
    /// Ends a running activity with its final content.
    func end(_ order: OrderID, content: LiveActivityContent, timestamp: Date) async
    /// The activity's push tokens: the current one (if any) first, then every change.
    func pushTokens(for order: OrderID) -> AsyncStream<Data>
}
