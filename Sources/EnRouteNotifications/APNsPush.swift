public import Foundation

/// One push ready for APNs: the device, the headers' values and the JSON payload.
public struct APNsPush: Sendable, Equatable {
    /// `apns-push-type` values this server sends.
    public enum PushType: String, Sendable { case alert, liveactivity }

    /// The device (or Live Activity) token as hex.
    public var token: String
    public var environment: APNsEnvironment
    public var pushType: PushType
    /// 10 now, 5 when convenient.
    public var priority: Int
    /// `apns-expiration`: an absolute time; nil leaves Apple's default.
    public var expiration: Date?
    /// `apns-collapse-id`, at most 64 bytes.
    public var collapseID: String?
    /// `apns-id`: a lowercase UUID we choose and log.
    public var apnsID: String
    public var payload: [UInt8]

    public init(
        token: String, environment: APNsEnvironment, pushType: PushType, priority: Int, expiration: Date?,
        collapseID: String?, apnsID: String, payload: [UInt8]
    ) {
        self.token = token; self.environment = environment; self.pushType = pushType; self.priority = priority
        self.expiration = expiration; self.collapseID = collapseID; self.apnsID = apnsID; self.payload = payload
    }
}
