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
        guard let header = request.headers["Authorization"], header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw HTTPError.unauthorized("Send a bearer token in the Authorization header.")
        }
        let token = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
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

    /// The account, which must have one of `roles`; 403 otherwise.
    public func account(for request: HTTPRequest, roles: Set<Party>) throws(HTTPError) -> Account {
        let account = try account(for: request)
        guard roles.contains(account.role) else {
            throw HTTPError.forbidden("This endpoint is for \(roles.map(\.rawValue).sorted().joined(separator: " or ")) accounts.")
        }
        return account
    }
}
