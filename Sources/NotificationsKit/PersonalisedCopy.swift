/// The personal version of each generic order-update body, once the rider's name is decrypted.
public enum PersonalisedCopy {
    /// The body with the rider's name, or nil when the generic text has no personal version.
    public static func body(generic: String, riderName name: String) -> String? {
        switch generic {
        case "Your order is on the way": "\(name) is on the way with your order"
        case "Your rider is almost there": "\(name) is almost there"
        case "Your order was delivered": "\(name) delivered your order"
        default: nil
        }
    }
}
