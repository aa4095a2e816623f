public import EnRouteModels

/// A product re-quoted: the price the rider saw before and the one on screen now (a "refreshed price").
public struct QuoteRefresh: Equatable, Sendable {
    public let productID: String
    public let before: Money
    public let after: Money
    /// A refresh of `productID` from `before` to `after`.
    public init(productID: String, before: Money, after: Money) {
        self.productID = productID; self.before = before; self.after = after
    }

    /// True when the refreshed price differs from the one shown before.
    public var priceChanged: Bool { before != after }
}
