import Foundation
import EnRouteServer

/// `enroute token --account a1 --role customer`: a development bearer token.
enum TokenCommand {
    static let help = """
    Usage: enroute token --account ID --role ROLE [--hours N] [--db PATH | --secret S]

    Mints an HS256 bearer token for the server that uses the same secret.

      --account ID   The account id (the token's `sub`).
      --role ROLE    customer, provider, merchant or ops.
      --hours N      Lifetime in hours (default 24).
      --db PATH      The server's database; its secret lives in PATH.secret (default ./enroute.sqlite, env ENROUTE_DB).
      --secret S     The JWT secret itself (env ENROUTE_JWT_SECRET); overrides --db.
    """

    static func run(_ args: [String]) throws -> Int32 {
        let options = try Options(args)
        if options.has("help") { print(help); return 0 }
        guard let account = options.string("account"), !account.isEmpty else { throw CLIError("--account is required\n\n\(help)") }
        guard let roleName = options.string("role"), let role = Party(rawValue: roleName), role != .backend else {
            throw CLIError("--role must be customer, provider, merchant or ops\n\n\(help)")
        }
        let hours = try options.int("hours") ?? 24
        let database = options.string("db", env: "ENROUTE_DB") ?? "./enroute.sqlite"
        let secret = try Secrets.jwtSecret(options, database: database)
        let auth = Authenticator(secret: secret, now: { Date() })
        print(try auth.token(account: account, role: role, lifetime: TimeInterval(hours) * 3600))
        return 0
    }
}
