import Foundation
import Testing
import EnRouteDomain
@testable import enroute

/// `--telephony` and its settings: each relay from flags or the environment, and every bad value a usage error
/// naming what to fix, before anything opens.
@Suite struct ServeTelephonyOptionsTests {
    static let account = "AC" + String(repeating: "0", count: 32)
    static let service = "KS" + String(repeating: "1", count: 32)

    func relay(_ args: [String], environment: [String: String] = [:]) throws -> any TelephonyRelay {
        try ServeCommand.telephony(try ServeCommand.spec.parse(args, environment: environment))
    }

    @Test func theLogRelayIsTheDefault() throws {
        #expect(try relay([]).name == "log")
        #expect(try relay(["--telephony-pool", "+15005550001, +15005550002"]).name == "log")
    }

    @Test func twilioProxyComesFromFlagsOrTheEnvironmentWithTheTokenFromTheEnvironmentOnly() throws {
        let flags = try relay(
            [
                "--telephony", "twilio-proxy", "--twilio-account-sid", Self.account, "--twilio-proxy-service",
                Self.service,
            ],
            environment: ["ENROUTE_TWILIO_AUTH_TOKEN": "t"])
        #expect(flags.name == "twilio-proxy")
        let env = try relay(
            [],
            environment: [
                "ENROUTE_TELEPHONY": "twilio-proxy", "ENROUTE_TWILIO_ACCOUNT_SID": Self.account,
                "ENROUTE_TWILIO_PROXY_SERVICE": Self.service, "ENROUTE_TWILIO_AUTH_TOKEN": "t",
            ])
        #expect(env.name == "twilio-proxy")
    }

    @Test(
        arguments: [
            (["--telephony", "sip"], [:], "--telephony: sip is not a relay (log or twilio-proxy)"),
            (
                ["--telephony-pool", "+358401234567,040123"], [:],
                "--telephony-pool: '040123' "
                    + "must be an E.164 number: '+' then 8 to 15 digits, the country code not starting with 0 (e.g. "
                    + "+358401234567)"
            ),
            (["--telephony-pool", ","], [:], "--telephony-pool must list at least one number"),
            (["--twilio-url", "https://x"], [:], "--twilio-url needs --telephony twilio-proxy"),
            (
                ["--telephony", "twilio-proxy", "--twilio-account-sid", "AC1"], [:],
                "--twilio-account-sid must be an account sid (AC…) or API key sid (SK…) of 34 characters"
            ),
            (
                ["--telephony", "twilio-proxy", "--twilio-account-sid", account], [:],
                "--telephony twilio-proxy needs --twilio-proxy-service (KS…)"
            ),
            (
                ["--telephony", "twilio-proxy", "--twilio-account-sid", account, "--twilio-proxy-service", service],
                [:],
                "--telephony twilio-proxy needs the auth token (or API key secret) in ENROUTE_TWILIO_AUTH_TOKEN"
            ),
            (
                [
                    "--telephony", "twilio-proxy", "--twilio-account-sid", account, "--twilio-proxy-service", service,
                    "--twilio-url", "ftp://x",
                ],
                ["ENROUTE_TWILIO_AUTH_TOKEN": "t"], "--twilio-url: ftp://x is not an http(s) URL with a host"
            ),
            (
                ["--telephony", "twilio-proxy", "--telephony-pool", "+15005550001"], [:],
                "--telephony-pool is for --telephony log; Twilio Proxy keeps its own pool"
            ),
        ] as [([String], [String: String], String)])
    func aBadTelephonySettingIsAUsageError(args: [String], environment: [String: String], message: String) {
        #expect(throws: CLIError(message)) { _ = try relay(args, environment: environment) }
    }

    @Test func callsCloseAfterTheGivenSeconds() throws {
        #expect(
            try ServeCommand.callPolicy(try ServeCommand.spec.parse(["--call-close-after", "60"], environment: [:]))
                .closeAfterEnd == 60)
        #expect(throws: CLIError.self) {
            try ServeCommand.callPolicy(try ServeCommand.spec.parse(["--call-close-after", "-1"], environment: [:]))
        }
    }
}
