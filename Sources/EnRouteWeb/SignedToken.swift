import Foundation
import EnRouteCrypto

/// A small HMAC-SHA256-signed token, `base64url(json).base64url(mac)`, for links and cookies that need no account:
/// the key is derived from the server's secret and a purpose, so a share link is never an ops cookie or a JWT.
struct SignedToken: Sendable {
    private let key: [UInt8]

    /// A signer for `purpose` (e.g. "share-link v1") under the server's `secret`.
    init(secret: String, purpose: String) {
        key = Digest.hmacSHA256(key: Array(secret.utf8), message: Array("enroute \(purpose)".utf8))
    }

    /// The token for `claims`.
    func sign<Claims: Encodable>(_ claims: Claims) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let payload = Base64URL.encode((try? encoder.encode(claims)) ?? Data())
        return payload + "." + Base64URL.encode(Digest.hmacSHA256(key: key, message: Array(payload.utf8)))
    }

    /// The claims of a token this signer made; nil for anything forged, altered or malformed.
    func verify<Claims: Decodable>(_ token: String, as: Claims.Type) -> Claims? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, token.utf8.count <= 1024, let mac = Base64URL.decode(parts[1]),
            Digest.constantTimeEqual(mac, Digest.hmacSHA256(key: key, message: Array(parts[0].utf8))),
            let json = Base64URL.decode(parts[0])
        else { return nil }
        return try? JSONDecoder().decode(Claims.self, from: Data(json))
    }
}

/// What a share link names: the trip, the revocation generation it was minted in, and when it stops working.
struct ShareClaims: Codable, Sendable, Equatable {
    /// The trip id.
    let t: String
    /// The trip's share-link generation when minted.
    let g: Int
    /// Expiry, seconds since 1970.
    let e: Int64
}

/// The ops console's cookie: whose, and until when.
struct ConsoleClaims: Codable, Sendable, Equatable {
    /// The ops account.
    let s: String
    /// Expiry, seconds since 1970.
    let e: Int64
}
