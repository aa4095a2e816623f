import Foundation
import EnRouteLogging
import HTTPTransport
import EnRouteDomain
import EnRouteSandbox
import EnRouteModels
import EnRouteTwilio
import CurlTransport

/// `enroute serve`'s calls-and-proof settings: which relay calls go through, its pool or its Twilio account, when a
/// trip's relayed number closes, and where proof uploads are kept.
extension ServeCommand {
    static let contactOptions: [OptionSpec] = [
        .value(
            "telephony", "R", env: "ENROUTE_TELEPHONY",
            """
            The call relay (ENROUTE_TELEPHONY): log (hands out --telephony-pool numbers and logs what a relay would do,
            never a real number; the default) or twilio-proxy (Twilio Proxy; the auth token from \
            ENROUTE_TWILIO_AUTH_TOKEN).
            """),
        .value(
            "telephony-pool", "NUMBERS", env: "ENROUTE_TELEPHONY_POOL",
            """
            Comma-separated E.164 numbers the log relay hands out (ENROUTE_TELEPHONY_POOL, default +447700900000…9).
            """),
        .value(
            "twilio-account-sid", "SID", env: "ENROUTE_TWILIO_ACCOUNT_SID",
            "The Twilio account (AC…) or API key (SK…) sid (ENROUTE_TWILIO_ACCOUNT_SID)."),
        .value(
            "twilio-proxy-service", "SID", env: "ENROUTE_TWILIO_PROXY_SERVICE",
            "The Proxy Service (KS…) whose pool sessions use (ENROUTE_TWILIO_PROXY_SERVICE)."),
        .value(
            "twilio-url", "URL", env: "ENROUTE_TWILIO_URL",
            "Twilio Proxy's base URL (ENROUTE_TWILIO_URL, default https://proxy.twilio.com), e.g. a stand-in."),
        .value(
            "call-close-after", "S", env: "ENROUTE_CALL_CLOSE_AFTER",
            """
            Seconds after a trip ends that its relayed number closes and calls are refused (ENROUTE_CALL_CLOSE_AFTER, \
            default 900).
            """),
        .value(
            "proof-dir", "DIR", env: "ENROUTE_PROOF_DIR",
            "Where proof-of-delivery uploads are kept (ENROUTE_PROOF_DIR, default DB.blobs beside the database)."),
    ]

    /// The relay `--telephony` names, checked before anything opens: a bad value is a clear error.
    static func telephony(_ options: Options) throws -> any TelephonyRelay {
        let choice = options.sourced("telephony")
        let twilioFlags = ["twilio-account-sid", "twilio-proxy-service", "twilio-url"].compactMap {
            options.sourced($0)?.source
        }
        switch choice?.value ?? "log" {
        case "log":
            if let flag = twilioFlags.first { throw CLIError("\(flag) needs --telephony twilio-proxy") }
            var pool = LogTelephonyRelay.defaultPool
            if let (text, source) = options.sourced("telephony-pool") {
                pool = []
                for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                    guard let number = E164PhoneNumber(entry) else {
                        throw CLIError("\(source): '\(entry)' \(E164PhoneNumber.rule)")
                    }
                    pool.append(number)
                }
                guard !pool.isEmpty else { throw CLIError("\(source) must list at least one number") }
            }
            log(
                "telephony: the log relay (\(pool.count) pool numbers); calls connect nobody, see --telephony "
                    + "twilio-proxy"
            )
            return LogTelephonyRelay(pool: pool, log: logger.withLock { $0 })
        case "twilio-proxy":
            if let (_, source) = options.sourced("telephony-pool") {
                throw CLIError("\(source) is for --telephony log; Twilio Proxy keeps its own pool")
            }
            guard let (account, accountSource) = options.sourced("twilio-account-sid") else {
                throw CLIError("--telephony twilio-proxy needs --twilio-account-sid (AC… or SK…)")
            }
            guard account.count == 34, account.hasPrefix("AC") || account.hasPrefix("SK") else {
                throw CLIError("\(accountSource) must be an account sid (AC…) or API key sid (SK…) of 34 characters")
            }
            guard let (service, serviceSource) = options.sourced("twilio-proxy-service") else {
                throw CLIError("--telephony twilio-proxy needs --twilio-proxy-service (KS…)")
            }
            guard service.count == 34, service.hasPrefix("KS") else {
                throw CLIError("\(serviceSource) must be a Proxy Service sid (KS…) of 34 characters")
            }
            guard let token = options.secret("ENROUTE_TWILIO_AUTH_TOKEN") else {
                throw CLIError(
                    "--telephony twilio-proxy needs the auth token (or API key secret) in ENROUTE_TWILIO_AUTH_TOKEN")
            }
            var base = URL(string: "https://proxy.twilio.com")!
            if let (text, source) = options.sourced("twilio-url") {
                guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                    throw CLIError("\(source): \(text) is not an http(s) URL with a host")
                }
                base = url
            }
            log("telephony: Twilio Proxy at \(base), service \(service)")
            return TwilioProxyRelay(
                configuration: TwilioProxyConfiguration(
                    username: account, password: token, serviceSid: service, baseURL: base),
                client: CurlHTTPClient())
        case let other:
            throw CLIError("\(choice?.source ?? "--telephony"): \(other) is not a relay (log or twilio-proxy)")
        }
    }

    /// `--call-close-after` as the calls policy.
    static func callPolicy(_ options: Options) throws -> CallPolicy {
        var policy = CallPolicy()
        if let s = try options.int("call-close-after", in: 0...7 * 86_400) { policy.closeAfterEnd = TimeInterval(s) }
        return policy
    }
}
