public import EnRouteModels

/// What the merchant's tablet shows.
public struct MerchantOrdersViewState: Sendable, Equatable {
    /// Unfinished orders, oldest first.
    public var orders: [TripSnapshot] = []
    /// Orders with an accept or ready on the wire (their buttons are disabled).
    public var busy: Set<String> = []
    /// True while the list loads.
    public var isLoading = false
    /// The last error, in words.
    public var message: String?

    /// An empty screen.
    public init() {}

    /// What the merchant can do with `order` now.
    public static func action(for order: TripSnapshot) -> MerchantAction? {
        switch (order.status, order.merchantStep) {
        case ("placed", _): .accept
        case ("picking", "preparing"): .markReady
        default: nil
        }
    }
}

/// The merchant's next move on an order.
public enum MerchantAction: String, Sendable, Equatable {
    /// Accept, stating a preparation time.
    case accept
    /// Mark the order ready for pickup.
    case markReady
}
