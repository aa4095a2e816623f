public import Foundation

/// HS256 JSON Web Tokens (RFC 7519) for EnRoute's bearer auth.
public struct HS256Signer: Sendable {
    private let secret: [UInt8]
    /// The `kid` stamped in the header of every token this signer makes; nil for none.
    public let keyID: String?

    /// A signer for `secret`; empty secrets are refused by the caller's configuration check.
    public init(secret: some Collection<UInt8>, keyID: String? = nil) {
        self.secret = Array(secret)
        self.keyID = keyID
    }

    /// Why a token was not accepted.
    public enum VerificationError: Error, Equatable, Sendable {
        case malformed, unsupportedAlgorithm, badSignature, unknownKey
        /// `exp` is absent or not a JSON number.
        case missingExpiry
        case expired
        /// `nbf` is still ahead.
        case notYetValid
        /// `iat` is ahead of the verifier's clock.
        case issuedInFuture
    }

    /// Signs `claims` (a JSON object) into a compact JWS, with `kid` in the header when the signer has one.
    public func sign(claims: [String: any Sendable]) throws -> String {
        var header: [String: any Sendable] = ["alg": "HS256", "typ": "JWT"]
        if let keyID { header["kid"] = keyID }
        let input =
            Base64URL.encode(Array(try JSONText.object(header).utf8)) + "."
            + Base64URL.encode(Array(try JSONText.object(claims).utf8))
        return input + "." + Base64URL.encode(mac(input))
    }

    /// Verifies signature and time claims against `now`, ignoring `kid`; returns the claims object.
    public func verify(
        _ token: some StringProtocol, now: Date, leeway: TimeInterval = 30
    ) throws(VerificationError) -> [String: Any] {
        let parsed = try ParsedJWT(token)
        try parsed.checkSignature(mac(parsed.signingInput))
        try parsed.checkTimes(now: now, leeway: leeway)
        return parsed.claims
    }

    func mac(_ input: String) -> [UInt8] { Digest.hmacSHA256(key: secret, message: Array(input.utf8)) }

    /// A short public id for `secret` (16 hex digits of an HMAC under it), so issuer and verifier agree on a `kid`
    /// without configuring one; it reveals nothing a token's own signature does not.
    public static func keyID(forSecret secret: some Collection<UInt8>) -> String {
        Digest.hex(Digest.hmacSHA256(key: secret, message: Array("enroute jwt kid".utf8)).prefix(8))
    }
}

/// Several HS256 verification keys at once, so the signing secret can rotate: tokens are signed with the
/// current key; a token's `kid` picks the key that checks it, and a token without `kid` is checked against
/// the current key only.
public struct HS256KeySet: Sendable {
    /// The key that signs new tokens.
    public let current: HS256Signer
    private let byID: [String: HS256Signer]

    /// `current` signs and verifies; `previous` only verify. Every key needs a `keyID`.
    public init(current: HS256Signer, previous: [HS256Signer] = []) {
        precondition(
            current.keyID != nil && previous.allSatisfy { $0.keyID != nil }, "every key in a key set needs a kid")
        self.current = current
        var byID: [String: HS256Signer] = [:]
        for key in previous { byID[key.keyID!] = key }
        byID[current.keyID!] = current
        self.byID = byID
    }

    /// Verifies a token with the key its `kid` names (the current key without one), then its time claims.
    public func verify(
        _ token: some StringProtocol, now: Date, leeway: TimeInterval = 30
    ) throws(HS256Signer.VerificationError) -> [String: Any] {
        let parsed = try ParsedJWT(token)
        let key: HS256Signer
        if let kid = parsed.keyID {
            guard let named = byID[kid] else { throw .unknownKey }
            key = named
        } else {
            key = current
        }
        try parsed.checkSignature(key.mac(parsed.signingInput))
        try parsed.checkTimes(now: now, leeway: leeway)
        return parsed.claims
    }
}

/// A compact JWS split and decoded, not yet trusted.
struct ParsedJWT {
    let signingInput: String
    let signature: [UInt8]
    let keyID: String?
    let claims: [String: Any]
    let times: TimeClaims

    init(_ token: some StringProtocol) throws(HS256Signer.VerificationError) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]),
            let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
            let signature = Base64URL.decode(parts[2]),
            let claimBytes = Base64URL.decode(parts[1]),
            let claims = (try? JSONSerialization.jsonObject(with: Data(claimBytes))) as? [String: Any]
        else { throw .malformed }
        guard header["alg"] as? String == "HS256" else { throw .unsupportedAlgorithm }
        if header["kid"] != nil {
            guard let kid = header["kid"] as? String, !kid.isEmpty else { throw .malformed }
            keyID = kid
        } else {
            keyID = nil
        }
        signingInput = parts[0] + "." + parts[1]
        self.signature = signature
        self.claims = claims
        // Decoded with Codable, which tells a JSON number from a string, a boolean or null.
        times = (try? JSONDecoder().decode(TimeClaims.self, from: Data(claimBytes))) ?? TimeClaims()
    }

    func checkSignature(_ expected: [UInt8]) throws(HS256Signer.VerificationError) {
        guard Digest.constantTimeEqual(expected, signature) else { throw .badSignature }
    }

    /// `exp` must be a number ahead of `now`, `nbf` (if any) behind it and `iat` (if any) not ahead, each within
    /// `leeway`.
    func checkTimes(now: Date, leeway: TimeInterval) throws(HS256Signer.VerificationError) {
        let t = now.timeIntervalSince1970
        guard !times.malformed else { throw .malformed }
        guard let exp = times.exp else { throw .missingExpiry }
        if t >= exp + leeway { throw .expired }
        if let nbf = times.nbf, t + leeway < nbf { throw .notYetValid }
        if let iat = times.iat, iat > t + leeway { throw .issuedInFuture }
    }
}

/// The registered time claims (RFC 7519 §4.1.4–4.1.6) as JSON numbers; `exp` is nil unless it is one.
struct TimeClaims: Decodable {
    var exp: Double?
    var nbf: Double?
    var iat: Double?
    /// `nbf` or `iat` is present but not a number (a string, a boolean, null).
    var malformed = false

    init() { malformed = true }

    private enum CodingKeys: String, CodingKey { case exp, nbf, iat }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        // `decode` (not `decodeIfPresent`), so that a present `null` fails like a string does.
        exp = c.contains(.exp) ? try? c.decode(Double.self, forKey: .exp) : nil
        for key in [CodingKeys.nbf, .iat] where c.contains(key) {
            guard let value = try? c.decode(Double.self, forKey: key) else { malformed = true; continue }
            if key == .nbf { nbf = value } else { iat = value }
        }
    }
}
