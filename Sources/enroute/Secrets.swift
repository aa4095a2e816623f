import Foundation
import EnRouteCrypto

/// Finds the JWT secret: `--secret`, `ENROUTE_JWT_SECRET`, or a random one kept beside the database.
enum Secrets {
    static func jwtSecret(_ options: Options, database: String) throws -> String {
        if let (secret, source) = options.sourced("secret") {
            guard secret.utf8.count >= 16 else { throw CLIError("\(source): the JWT secret must be at least 16 bytes") }
            return secret
        }
        let path = database + ".secret"
        if let existing = try? String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines), existing.count >= 32
        {
            return existing
        }
        let secret = Digest.hex(Digest.randomBytes(32))
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data((secret + "\n").utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw CLIError("cannot write the JWT secret to \(path); pass --secret or ENROUTE_JWT_SECRET")
        }
        return secret
    }

    /// `--previous-secret` (repeatable) or `ENROUTE_JWT_PREVIOUS_SECRETS` (comma-separated): retired secrets that still
    /// verify.
    static func previousSecrets(_ options: Options) throws -> [String] {
        let secrets = options.strings("previous-secret")
        if let short = secrets.first(where: { $0.utf8.count < 16 }) {
            throw CLIError("a previous JWT secret must be at least 16 bytes (one is \(short.utf8.count))")
        }
        return secrets
    }
}
