public import EnRouteDomain
public import Foundation
import EnRouteCrypto
public import HTTPEngine
import Synchronization

/// Bearer JWT (HS256) authentication: `sub` is the account id, `role` its party, `exp` its expiry.
///
/// A token must carry a numeric `exp` ahead of now, and any `nbf` or `iat` must not be ahead, each within
/// `leeway`. Tokens carry a `kid` naming their key, so several secrets verify at once while the signing
/// secret rotates: new tokens use the current secret, a known previous one still verifies, an unknown
/// `kid` is refused, and a token without `kid` is checked against the current secret only.
public final class Authenticator: Sendable {
    private let keys: HS256KeySet
    private let leeway: TimeInterval
    private let now: @Sendable () -> Date
    /// Verified tokens, so hot paths skip the HMAC and JSON work.
    private let verified = Mutex(VerifiedTokens(limit: 10_000))

    /// Two generations of at most `limit` tokens each, the older dropped when the newer fills, so a full cache forgets
    /// the tokens least recently seen, not all of them.
    struct VerifiedTokens {
        let limit: Int
        var newer: [String: (account: Account, expires: Date)] = [:]
        var older: [String: (account: Account, expires: Date)] = [:]

        /// The token's entry; one found in the older generation moves to the newer.
        mutating func find(_ token: String) -> (account: Account, expires: Date)? {
            if let hit = newer[token] { return hit }
            guard let hit = older.removeValue(forKey: token) else { return nil }
            insert(token, hit)
            return hit
        }

        mutating func insert(_ token: String, _ entry: (account: Account, expires: Date)) {
            if newer.count >= limit {
                older = newer
                newer = [:]
                newer.reserveCapacity(limit)
            }
            newer[token] = entry
        }
    }

    /// An authenticator that signs with `secret` and also accepts tokens signed with any of `previousSecrets`;
    /// `leeway` is the clock skew allowed on `exp`, `nbf` and `iat`.
    public init(
        secret: String, previousSecrets: [String] = [], leeway: TimeInterval = 30, now: @escaping @Sendable () -> Date
    ) {
        func key(_ secret: String) -> HS256Signer {
            HS256Signer(secret: Array(secret.utf8), keyID: HS256Signer.keyID(forSecret: Array(secret.utf8)))
        }
        self.keys = HS256KeySet(current: key(secret), previous: previousSecrets.map(key))
        self.leeway = max(0, leeway)
        self.now = now
    }

    /// The `kid` of the current signing secret.
    public var currentKeyID: String { keys.current.keyID ?? "" }

    /// Mints a token with `kid`, `iat` and `exp` (the `enroute token` command and tests).
    public func token(account: String, role: Party, lifetime: TimeInterval = 24 * 3600) throws -> String {
        let issued = now()
        return try keys.current.sign(claims: [
            "sub": account, "role": role.rawValue, "iat": Int(issued.timeIntervalSince1970),
            "exp": Int(issued.addingTimeInterval(lifetime).timeIntervalSince1970),
        ])
    }

    /// The account behind the request's bearer token; 401 when absent, malformed, forged, expired or not yet valid.
    public func account(for request: HTTPRequest) throws(HTTPError) -> Account {
        guard let header = request.headers["Authorization"], let token = Self.bearerToken(header) else {
            throw HTTPError.unauthorized("Send a bearer token in the Authorization header.")
        }
        let at = now()
        if let hit = verified.withLock({ $0.find(token) }), hit.expires.addingTimeInterval(leeway) > at {
            return hit.account
        }
        let claims: [String: Any]
        do {
            claims = try keys.verify(token, now: at, leeway: leeway)
        } catch {
            throw HTTPError.unauthorized(Self.detail(error))
        }
        guard let sub = claims["sub"] as? String, !sub.isEmpty, let roleName = claims["role"] as? String,
            let role = Party(rawValue: roleName), role != .backend
        else {
            throw HTTPError.unauthorized("The token lacks a subject or a known role.")
        }
        let account = Account(id: sub, role: role)
        // Verification proved `exp` is a number.
        let expires = Date(timeIntervalSince1970: (claims["exp"] as? NSNumber)?.doubleValue ?? 0)
        verified.withLock { $0.insert(token, (account, expires)) }
        return account
    }

    /// The 401's detail for each way a token fails.
    static func detail(_ error: HS256Signer.VerificationError) -> String {
        switch error {
        case .malformed, .unsupportedAlgorithm, .badSignature: "The token is not valid."
        case .unknownKey: "The token was signed with a key this server does not know (its kid)."
        case .missingExpiry: "The token has no expiry: it needs a numeric exp claim."
        case .expired: "The token has expired."
        case .notYetValid: "The token is not valid yet (its nbf is in the future)."
        case .issuedInFuture: "The token was issued in the future (its iat is ahead of the server's clock)."
        }
    }

    /// The token of a `Bearer <token>` header value, scheme case-insensitive; nil otherwise.
    static func bearerToken(_ header: String) -> String? {
        let bytes = Array(header.utf8)
        let scheme = Array("bearer".utf8)
        guard bytes.count > 7, zip(bytes.prefix(6), scheme).allSatisfy({ $0 | 0x20 == $1 }), bytes[6] == 0x20 else {
            return nil
        }
        var start = 7, end = bytes.count
        while start < end, bytes[start] == 0x20 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 { end -= 1 }
        return start < end ? String(decoding: bytes[start..<end], as: UTF8.self) : nil
    }

    /// The account, which must have one of `roles`; 403 otherwise.
    public func account(for request: HTTPRequest, roles: Set<Party>) throws(HTTPError) -> Account {
        let account = try account(for: request)
        guard roles.contains(account.role) else {
            throw HTTPError.forbidden(
                "This endpoint is for \(roles.map(\.rawValue).sorted().joined(separator: " or ")) accounts.")
        }
        return account
    }
}
