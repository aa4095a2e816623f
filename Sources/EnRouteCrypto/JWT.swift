public import Foundation

/// HS256 JSON Web Tokens (RFC 7519) for EnRoute's bearer auth.
public struct HS256Signer: Sendable {
    private let secret: [UInt8]

    /// A signer for `secret`; empty secrets are refused by the caller's configuration check.
    public init(secret: some Collection<UInt8>) { self.secret = Array(secret) }

    /// Why a token was not accepted.
    public enum VerificationError: Error, Equatable, Sendable {
        case malformed, unsupportedAlgorithm, badSignature, expired
    }

    /// Signs `claims` (a JSON object) into a compact JWS.
    public func sign(claims: [String: any Sendable]) throws -> String {
        let header = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let body = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        let input = header + "." + Base64URL.encode(body)
        return input + "." + Base64URL.encode(Digest.hmacSHA256(key: secret, message: Array(input.utf8)))
    }

    /// Verifies signature and `exp` against `now`, returning the claims object.
    public func verify(_ token: some StringProtocol, now: Date) throws(VerificationError) -> [String: Any] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Base64URL.decode(parts[0]),
              let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
              let signature = Base64URL.decode(parts[2]),
              let claimBytes = Base64URL.decode(parts[1]),
              let claims = (try? JSONSerialization.jsonObject(with: Data(claimBytes))) as? [String: Any]
        else { throw .malformed }
        guard header["alg"] as? String == "HS256" else { throw .unsupportedAlgorithm }
        let expected = Digest.hmacSHA256(key: secret, message: Array((parts[0] + "." + parts[1]).utf8))
        guard Digest.constantTimeEqual(expected, signature) else { throw .badSignature }
        if let exp = (claims["exp"] as? NSNumber)?.doubleValue, exp <= now.timeIntervalSince1970 { throw .expired }
        return claims
    }
}
