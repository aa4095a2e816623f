/// The APNs device token: the address APNs gives this app on this phone. It can change.
public struct DeviceToken: Hashable, Sendable {
    public let bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Lowercase hex, as `PUT /v1/devices/{token}` takes it.
    public var hex: String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }
}
