/// Where in the app a tap (or a universal link) should land.
public indirect enum Route: Hashable, Sendable {
    case home
    case order(OrderID)
    case offer(OfferID)
    case signIn(then: Route)

    /// Parses the payload's `route` string ("orders/8F3K", "offers/42", "home"); nil when this app version can't read
    /// it.
    public init?(path: String) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        switch (parts.first, parts.count) {
        case ("home", 1): self = .home
        case ("orders", 2) where Self.isID(parts[1]): self = .order(OrderID(parts[1]))
        case ("offers", 2) where Self.isID(parts[1]): self = .offer(OfferID(parts[1]))
        default: return nil
        }
    }

    private static func isID(_ s: String) -> Bool {
        !s.isEmpty && s.count <= 64
            && s.unicodeScalars.allSatisfy {
                ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "-" || $0 == "_"
            }
    }
}
