public import EnRouteDomain
public import Foundation
public import HTTPEngine
import EnRouteModels
public import EnRouteNotifications

/// The notification routes: device registration (`PUT`/`DELETE /v1/devices/{token}`) and opens
/// (`POST /v1/notifications/{id}/opened`), counted once per notification in `/metrics`.
public struct NotificationsAPI: Sendable {
    public let auth: Authenticator
    public let devices: any DeviceRepository
    public let ledger: any NotificationLedger
    public let metrics: MetricsRegistry
    private let now: @Sendable () -> Date

    /// Opens are counted in this metric, labelled by campaign and stage.
    public static let opensMetric = "enroute_notification_opens_total"
    /// The actions a tap can report.
    public static let actions: Set<String> = ["open", "trackOrder", "seeOffer"]

    public init(
        auth: Authenticator, devices: any DeviceRepository, ledger: any NotificationLedger, metrics: MetricsRegistry,
        now: @escaping @Sendable () -> Date
    ) {
        self.auth = auth; self.devices = devices; self.ledger = ledger; self.metrics = metrics; self.now = now
    }

    /// Adds the routes to `router`.
    public func register(into router: inout Router) {
        router.put(APIPath.Template.device, bodyLimit: 4096) { req in
            let account = try auth.account(for: req)
            let token = try Self.token(req.parameter("token"))
            let body = try req.decode(DeviceRegistrationBody.self)
            guard body.platform == "ios" else { throw HTTPError.invalid("/platform", "must be ios") }
            guard let environment = APNsEnvironment(wire: body.environment) else {
                throw HTTPError.invalid("/environment", "must be sandbox or production")
            }
            guard !body.appVersion.isEmpty, body.appVersion.count <= 32 else {
                throw HTTPError.invalid("/appVersion", "must be 1 to 32 characters")
            }
            var key: [UInt8]?
            if let text = body.publicKey {
                guard let bytes = Data(base64Encoded: text).map(Array.init), bytes.count == 32 else {
                    throw HTTPError.invalid("/publicKey", "must be a base64 X25519 public key (32 bytes)")
                }
                key = bytes
            }
            try await devices.register(
                DeviceRecord(
                    token: token, accountId: account.id, platform: body.platform, environment: environment,
                    appVersion: body.appVersion, publicKey: key, registeredAt: now()))
            metrics.increment(
                "enroute_device_registrations_total", labels: ["environment": environment.rawValue],
                help: "Device token registrations (PUT /v1/devices).")
            return .empty(204)
        }
        router.delete(APIPath.Template.device) { req in
            let account = try auth.account(for: req)
            let token = try Self.token(req.parameter("token"))
            // 204 whether or not it was there: sign-out may repeat, and nothing is revealed about other accounts.
            try await devices.remove(token: token, accountId: account.id)
            return .empty(204)
        }
        router.post(APIPath.Template.notificationOpened, bodyLimit: 1024) { req in
            let account = try auth.account(for: req)
            let id = try req.parameter("id")
            guard id.count <= 128 else { throw HTTPError.notFound() }
            let body = try req.decode(NotificationOpenedBody.self)
            guard Self.actions.contains(body.action) else {
                throw HTTPError.invalid("/action", "must be open, trackOrder or seeOffer")
            }
            switch try await ledger.recordOpen(id: id, accountId: account.id, action: body.action, at: now()) {
            case .firstOpen(let sent):
                metrics.increment(
                    Self.opensMetric, labels: ["campaign": sent.campaign, "stage": sent.stage],
                    help: "Notifications opened, counted once per notification, by campaign and order stage.")
                return .empty(204)
            case .repeated:
                return .empty(204)
            case .unknown:
                throw HTTPError.notFound("No such notification.")
            }
        }
    }

    /// A device token is hex; any length APNs might use, lower-cased.
    static func token(_ raw: String) throws(HTTPError) -> String {
        guard (16...400).contains(raw.count), raw.allSatisfy(\.isHexDigit) else {
            throw HTTPError.invalid("/token", "must be the device token as hex")
        }
        return raw.lowercased()
    }
}
