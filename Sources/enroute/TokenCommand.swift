import Foundation
import EnRouteDomain
import EnRouteAPI

/// `enroute token --account a1 --role customer`: a development bearer token.
enum TokenCommand {
    static let spec = CommandSpec(
        name: "token",
        synopsis: """
            Usage: enroute token --account ID --role ROLE [--hours N] [--db PATH | --secret S]

            Mints an HS256 bearer token for the server that uses the same secret, with the secret's kid in its header.
            """,
        sections: [
            (
                nil,
                [
                    .value("account", "ID", "The account id (the token's `sub`)."),
                    .value("role", "ROLE", "customer, provider, merchant or ops."),
                    .value("hours", "N", "Lifetime in hours (default 24)."),
                    .value(
                        "db", "PATH", env: "ENROUTE_DB",
                        "The server's database; its secret lives in PATH.secret (default ./enroute.sqlite, env "
                            + "ENROUTE_DB)."
                    ),
                    .value(
                        "secret", "S", env: "ENROUTE_JWT_SECRET",
                        "The JWT secret itself (env ENROUTE_JWT_SECRET); overrides --db."),
                ]
            )
        ])

    static func run(_ args: [String]) throws -> Int32 {
        let options = try spec.parse(args)
        if options.has("help") { print(spec.helpText); return 0 }
        guard let account = options.string("account"), !account.isEmpty else {
            throw CLIError("--account is required (see `enroute token --help`)")
        }
        guard let roleName = options.string("role"), let role = Party(rawValue: roleName), role != .backend else {
            throw CLIError(
                "--role must be customer, provider, merchant or ops"
                    + (options.string("role").map { ", got '\($0)'" } ?? ""))
        }
        let hours = try options.int("hours", in: 1...(24 * 366)) ?? 24
        let database = options.string("db") ?? "./enroute.sqlite"
        let secret = try Secrets.jwtSecret(options, database: database)
        let auth = Authenticator(secret: secret, now: { Date() })
        print(try auth.token(account: account, role: role, lifetime: TimeInterval(hours) * 3600))
        return 0
    }
}
