// Apple platforms only: the delivery's Live Activity type, shared by the app (which starts and updates the activity)
// and its widget extension (which draws it). ActivityKit's iOS API only: other platforms build an empty module.
#if canImport(ActivityKit) && os(iOS) && !targetEnvironment(macCatalyst)
public import ActivityKit
public import EnRouteModels

/// A delivery's Live Activity: the order it follows, and as content the same state the server's push carries.
///
/// The type's name is the push's `attributes-type`; renaming it breaks push-to-start.
public struct OrderTrackingActivityAttributes: ActivityAttributes, Sendable {
    /// The changing part: the push's `content-state`, decoded as the server encodes it.
    public typealias ContentState = OrderActivityContentState

    /// The order the activity follows.
    public let orderID: String

    /// Attributes for the order `orderID`.
    public init(orderID: String) {
        self.orderID = orderID
    }
}
#endif
