public import EnRouteNotifications
public import Foundation
import EnRouteCrypto
import Synchronization
public import EnRouteLogging

/// Sends pushes to APNs with token auth and turns every documented answer into a `PushOutcome` (Apple's APNs provider
/// API).
public final class APNsClient: PushGateway {
    private let configuration: APNsConfiguration
    private let transport: any APNsTransport
    private let tokens: APNsTokenProvider
    private let log: Logger

    /// A client for `configuration` over `transport`; `now` times the provider tokens.
    public init(
        configuration: APNsConfiguration, transport: any APNsTransport, now: @escaping @Sendable () -> Date,
        tokenRefreshAfter: TimeInterval = 50 * 60, log: Logger = .discard
    ) throws {
        self.configuration = configuration
        self.transport = transport
        self.tokens = APNsTokenProvider(
            signer: try ES256Signer(pem: configuration.privateKeyPEM), keyID: configuration.keyID,
            teamID: configuration.teamID, refreshAfter: tokenRefreshAfter, now: now)
        self.log = log
    }

    public func send(_ push: APNsPush) async -> PushOutcome {
        let first = await attempt(push)
        guard case .expiredProviderToken(let token) = first else { return first.outcome }
        // Mint again and retry once, unless the token is too young to replace.
        guard tokens.expired(token) else { return .retry(.configuration, reason: "ExpiredProviderToken") }
        let second = await attempt(push)
        if case .expiredProviderToken = second { return .retry(.configuration, reason: "ExpiredProviderToken") }
        return second.outcome
    }

    private enum Attempt {
        case done(PushOutcome)
        case expiredProviderToken(String)

        var outcome: PushOutcome {
            switch self {
            case .done(let o): o
            case .expiredProviderToken: .retry(.configuration, reason: "ExpiredProviderToken")
            }
        }
    }

    private func attempt(_ push: APNsPush) async -> Attempt {
        let jwt: String
        do { jwt = try tokens.token() } catch {
            log.warning("apns: cannot sign the provider token: \(error)")
            return .done(.retry(.configuration, reason: "signing failed"))
        }
        let request = APNsHTTPRequest(
            environment: push.environment, path: "/3/device/\(push.token)", headers: headers(push, jwt: jwt),
            body: push.payload)
        let response: APNsHTTPResponse
        do { response = try await transport.send(request) } catch is CancellationError {
            return .done(.retry(.network, reason: "cancelled"))
        } catch {
            return .done(.retry(.network, reason: "\(error)"))
        }
        if response.status == 200 { return .done(.delivered) }
        let body = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        let reason = body?["reason"] as? String ?? ""
        log.info("apns: \(response.status) \(reason) for \(push.apnsID) (\(push.environment.rawValue))")
        switch (response.status, reason) {
        case (410, _):
            let millis = (body?["timestamp"] as? NSNumber)?.doubleValue
            return .done(.tokenInvalid(since: millis.map { $0 / 1000 }))
        case (400, "BadDeviceToken"):
            // The host follows the device's registered environment, so the token itself is bad.
            return .done(.tokenInvalid(since: nil))
        case (400, "IdleTimeout"):
            await transport.reset(push.environment)
            return .done(.retry(.network, reason: reason))
        case (400, "BadTopic"), (400, "MissingTopic"), (400, "TopicDisallowed"):
            return .done(.retry(.configuration, reason: reason))
        case (403, "ExpiredProviderToken"):
            return .expiredProviderToken(jwt)
        case (403, "UnrelatedKeyIdInToken"):
            await transport.reset(push.environment)
            return .done(.retry(.configuration, reason: reason))
        case (403, "Forbidden"):
            return .done(.rejected(reason: reason))
        case (403, _):
            // InvalidProviderToken, MissingProviderToken, BadEnvironmentKeyIdInToken, certificate errors:
            // our credentials are wrong. Never delete device tokens for these.
            return .done(.retry(.configuration, reason: reason))
        case (429, _):
            return .done(.retry(.throttled, reason: reason.isEmpty ? "TooManyRequests" : reason))
        case (500..., "Shutdown"):
            await transport.reset(push.environment)
            return .done(.retry(.serverError, reason: reason))
        case (500..., _):
            return .done(.retry(.serverError, reason: reason))
        default:
            // 400 payload errors, DeviceTokenNotForTopic, 404, 405, 413: resending the same push cannot help.
            return .done(.rejected(reason: "\(response.status) \(reason)"))
        }
    }

    private func headers(_ push: APNsPush, jwt: String) -> [(String, String)] {
        var h: [(String, String)] = [
            ("authorization", "bearer \(jwt)"),
            ("apns-push-type", push.pushType.rawValue),
            (
                "apns-topic",
                push.pushType == .liveactivity ? configuration.topic + ".push-type.liveactivity" : configuration.topic
            ),
            ("apns-priority", String(push.priority)),
            ("apns-id", push.apnsID),
        ]
        if let expiration = push.expiration {
            h.append(("apns-expiration", String(max(1, Int(expiration.timeIntervalSince1970)))))
        }
        if let collapse = push.collapseID { h.append(("apns-collapse-id", collapse)) }
        return h
    }
}
