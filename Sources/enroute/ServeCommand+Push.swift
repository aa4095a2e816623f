import Foundation
import EnRouteLogging
import EnRouteAPNs
import EnRouteNotifications

/// `enroute serve`'s push notifications: APNs with token auth, or a log line per push.
extension ServeCommand {
    /// APNs when all four settings are given, a log line per push when none is.
    static func pushGateway(_ options: Options, now: @escaping @Sendable () -> Date) throws -> any PushGateway {
        let keyID = options.string("apns-key-id")
        let teamID = options.string("apns-team-id")
        let keyPath = options.string("apns-key")
        let topic = options.string("apns-topic")
        let host = try apnsHost(options)
        let caFile = options.string("apns-ca")
        let given = [keyID, teamID, keyPath, topic].compactMap { $0 }
        if given.isEmpty {
            if host != nil || caFile != nil {
                throw CLIError("--apns-url and --apns-ca need the four APNs settings as well")
            }
            log(
                "APNs is not configured: pushes are logged, not sent (see --apns-key-id, --apns-team-id, --apns-key, "
                    + "--apns-topic)"
            )
            return LogPushGateway(log: logger.withLock { $0 })
        }
        guard let keyID, let teamID, let keyPath, let topic else {
            throw CLIError("APNs needs all of --apns-key-id, --apns-team-id, --apns-key and --apns-topic")
        }
        guard let pem = try? String(contentsOfFile: keyPath, encoding: .utf8) else {
            throw CLIError("cannot read the APNs key \(keyPath)")
        }
        do {
            let client = try APNsClient(
                configuration: APNsConfiguration(keyID: keyID, teamID: teamID, privateKeyPEM: pem, topic: topic),
                transport: CurlAPNsTransport(
                    hosts: host.map { [.sandbox: $0, .production: $0] } ?? [:], caFile: caFile),
                now: now, log: logger.withLock { $0 })
            log(
                "APNs configured: key \(keyID), team \(teamID), topic \(topic)"
                    + (host.map { ", every push to \($0)" } ?? ""))
            return client
        } catch {
            throw CLIError("the APNs key \(keyPath) is not a P-256 .p8 key: \(error)")
        }
    }

    /// `--apns-url`: an https base URL with a host and nothing after it.
    static func apnsHost(_ options: Options) throws -> String? {
        guard let (text, source) = options.sourced("apns-url") else { return nil }
        guard let url = URL(string: text), url.scheme == "https", url.host != nil, url.path.isEmpty || url.path == "/",
            url.query == nil
        else {
            throw CLIError("\(source) must be an https base URL such as https://127.0.0.1:8443, got '\(text)'")
        }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }
}
