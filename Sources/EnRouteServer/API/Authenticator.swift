public import Foundation
import EnRouteCrypto
public import HTTPEngine
import Synchronization

/// Bearer JWT (HS256) authentication: `sub` is the account id, `role` its party, `exp` its expiry.
public final class Authenticator: Sendable {
    private let signer: HS256Signer
    private let now: @Sendable () -> Date
    // Verified tokens, so hot paths skip the HMAC and JSON work; bounded.
    private let verified = Mutex<[String: (account: Account, expires: Date)]>([:])
    private let cacheLimit = 10_000

    /// An authenticator for tokens signed with `secret`.
    public init(secret: String, now: @escaping @Sendable () -> Date) {
        self.signer = HS256Signer(secret: Array(secret.utf8))
        self.now = now
    }

    /// Mints a token (the `enroute token` command and tests).
    public func token(account: String, role: Party, lifetime: TimeInterval = 24 * 3600) throws -> String {
        try signer.sign(claims: ["sub": account, "role": role.rawValue, "exp": Int(now().addingTimeInterval(lifetime).timeIntervalSince1970)])
    }

    /// The account behind the request's bearer token; 401 when absent, malformed, forged or expired.
    public func account(for request: HTTPRequest) throws(HTTPError) -> Account {
        guard let header = request.headers["Authorization"], let token = Self.bearerToken(header) else {
            throw HTTPError.unauthorized("Send a bearer token in the Authorization header.")
        }
        let at = now()
        if let hit = verified.withLock({ $0[token] }), hit.expires > at { return hit.account }
        let claims: [String: Any]
        do {
            claims = try signer.verify(token, now: at)
        } catch .expired {
            throw HTTPError.unauthorized("The token has expired.")
        } catch {
            throw HTTPError.unauthorized("The token is not valid.")
        }
        guard let sub = claims["sub"] as? String, !sub.isEmpty, let roleName = claims["role"] as? String,
              let role = Party(rawValue: roleName), role != .backend else {
            throw HTTPError.unauthorized("The token lacks a subject or a known role.")
        }
        let account = Account(id: sub, role: role)
        let expires = (claims["exp"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue) } ?? at.addingTimeInterval(3600)
        verified.withLock { cache in
            if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[token] = (account, expires)
        }
        return account
    }

    /// The token of a `Bearer <token>` header value, scheme case-insensitive; nil otherwise.
    static func bearerToken(_ header: String) -> String? {
        let bytes = Array(header.utf8)
        let scheme = Array("bearer".utf8)
        guard bytes.count > 7, zip(bytes.prefix(6), scheme).allSatisfy({ $0 | 0x20 == $1 }), bytes[6] == 0x20 else { return nil }
        var start = 7, end = bytes.count
        while start < end, bytes[start] == 0x20 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 { end -= 1 }
        return start < end ? String(decoding: bytes[start..<end], as: UTF8.self) : nil
    }

    /// The account, which must have one of `roles`; 403 otherwise.
    public func account(for request: HTTPRequest, roles: Set<Party>) throws(HTTPError) -> Account {
        let account = try account(for: request)
        guard roles.contains(account.role) else {
            throw HTTPError.forbidden("This endpoint is for \(roles.map(\.rawValue).sorted().joined(separator: " or ")) accounts.")
        }
        return account
    }
}
