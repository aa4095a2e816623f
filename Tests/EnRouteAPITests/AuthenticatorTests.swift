import Foundation
import Testing
import EnRouteCrypto
import EnRouteDomain
@testable import EnRouteAPI
import HTTPEngine
import TestSupport

/// Bearer tokens: time claims (`exp`, `nbf`, `iat`) with leeway, and `kid` for rotating the secret.
@Suite struct AuthenticatorTests {
    static let secret = "test-secret-0123456789abcdef"
    static let previous = "previous-secret-0123456789"

    /// A token signed with `secret` carrying exactly `claims` (JSON text) and an optional `kid`.
    static func raw(_ claims: String, secret: String = secret, kid: String? = nil) -> String {
        let header = kid.map { #"{"alg":"HS256","kid":"\#($0)","typ":"JWT"}"# } ?? #"{"alg":"HS256","typ":"JWT"}"#
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        return input + "." + Base64URL.encode(Digest.hmacSHA256(key: Array(secret.utf8), message: Array(input.utf8)))
    }

    static func makeSUT(
        previousSecrets: [String] = [], leeway: TimeInterval = 30
    ) -> (auth: Authenticator, clock: ManualClock) {
        let clock = ManualClock()
        return (
            Authenticator(secret: secret, previousSecrets: previousSecrets, leeway: leeway, now: { clock.date }), clock
        )
    }

    static func request(_ token: String) -> HTTPRequest {
        HTTPRequest(
            method: "GET", path: "/v1/trips/active", query: [:],
            headers: HTTPHeaders([("Authorization", "Bearer \(token)")]), body: [])
    }

    /// The 401's detail, or nil when the token is accepted.
    static func rejection(_ auth: Authenticator, _ token: String) -> String? {
        do { _ = try auth.account(for: request(token)); return nil } catch {
            return error.status == 401 ? error.problem.detail : "status \(error.status)"
        }
    }

    static func object(_ part: Substring) throws -> [String: Any] {
        let bytes = try #require(Base64URL.decode(part))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    static func seconds(_ clock: ManualClock) -> Int { Int(clock.date.timeIntervalSince1970) }

    @Test func theVerifiedTokenCacheForgetsTheTokensLeastRecentlySeenNotAllOfThem() {
        var cache = Authenticator.VerifiedTokens(limit: 2)
        let entry = (account: Account(id: "c1", role: .customer), expires: Date(timeIntervalSince1970: 0))
        cache.insert("a", entry)
        cache.insert("b", entry)
        cache.insert("c", entry)  // the newer generation was full: a and b are now the older one
        #expect(cache.find("a") != nil, "still known, and moved to the newer generation")
        cache.insert("d", entry)  // full again (c, a): b, not seen since, goes with the older generation
        #expect(cache.find("b") == nil)
        #expect(cache.find("a") != nil && cache.find("c") != nil && cache.find("d") != nil)
    }

    @Test(arguments: [
        (#"{"sub":"c1","role":"customer"}"#, "no exp"),
        (#"{"sub":"c1","role":"customer","exp":null}"#, "exp null"),
        (#"{"sub":"c1","role":"customer","exp":"99999999999"}"#, "exp a string"),
        (#"{"sub":"c1","role":"customer","exp":true}"#, "exp a boolean"),
    ])
    func aTokenWithoutANumericExpiryIsRefused(claims: String, _ label: String) {
        let (auth, _) = Self.makeSUT()
        #expect(
            Self.rejection(auth, Self.raw(claims)) == "The token has no expiry: it needs a numeric exp claim.",
            "\(label)")
    }

    @Test func expiryHasALeewayAndThenTheTokenIsRefused() async {
        let (auth, clock) = Self.makeSUT(leeway: 30)
        let token = Self.raw(#"{"sub":"c1","role":"customer","exp":\#(Self.seconds(clock) + 60)}"#)
        #expect(Self.rejection(auth, token) == nil)
        await clock.advance(by: .seconds(85))
        #expect(Self.rejection(auth, token) == nil, "within the 30 s leeway")
        await clock.advance(by: .seconds(10))
        #expect(Self.rejection(auth, token) == "The token has expired.", "also once it was cached as verified")
    }

    @Test func aTokenIsRefusedBeforeItsNotBeforeTime() async {
        let (auth, clock) = Self.makeSUT(leeway: 30)
        let now = Self.seconds(clock)
        let token = Self.raw(#"{"sub":"c1","role":"customer","nbf":\#(now + 100),"exp":\#(now + 3600)}"#)
        #expect(Self.rejection(auth, token) == "The token is not valid yet (its nbf is in the future).")
        await clock.advance(by: .seconds(71))
        #expect(Self.rejection(auth, token) == nil)
    }

    @Test func aTokenIssuedInTheFutureBeyondTheLeewayIsRefused() {
        let (auth, clock) = Self.makeSUT(leeway: 30)
        let now = Self.seconds(clock)
        #expect(
            Self.rejection(auth, Self.raw(#"{"sub":"c1","role":"customer","iat":\#(now + 20),"exp":\#(now + 3600)}"#))
                == nil)
        #expect(
            Self.rejection(auth, Self.raw(#"{"sub":"c1","role":"customer","iat":\#(now + 31),"exp":\#(now + 3600)}"#))
                == "The token was issued in the future (its iat is ahead of the server's clock).")
    }

    @Test(arguments: [#""nbf":"soon""#, #""iat":null"#, #""iat":false"#])
    func nonNumericTimeClaimsAreRefused(claim: String) {
        let (auth, clock) = Self.makeSUT()
        #expect(
            Self.rejection(
                auth, Self.raw(#"{"sub":"c1","role":"customer",\#(claim),"exp":\#(Self.seconds(clock) + 60)}"#))
                == "The token is not valid.")
    }

    @Test func mintedTokensCarryTheCurrentKeyIDAndTheirTimes() throws {
        let (auth, clock) = Self.makeSUT()
        let parts = try auth.token(account: "c1", role: .customer, lifetime: 600).split(separator: ".")
        let header = try Self.object(parts[0]), claims = try Self.object(parts[1])
        #expect(
            header["kid"] as? String == auth.currentKeyID
                && auth.currentKeyID == HS256Signer.keyID(forSecret: Array(Self.secret.utf8)))
        #expect(claims["iat"] as? Int == Self.seconds(clock) && claims["exp"] as? Int == Self.seconds(clock) + 600)
    }

    /// A token has one spelling: its signature re-spelled (the last character's unused bits set, or padded) is
    /// refused, though it decodes to the same bytes a lenient decoder would accept.
    @Test(arguments: [Respelling.lowBitFlipped, .padded, .doublyPadded])
    func aSignatureSpelledAnotherWayIsRefused(_ respelling: Respelling) {
        let (auth, clock) = Self.makeSUT()
        let token = Self.raw(#"{"sub":"c1","role":"customer","exp":\#(Self.seconds(clock) + 60)}"#)
        #expect(Self.rejection(auth, token) == nil)
        #expect(Self.rejection(auth, respelling.apply(token)) == "The token is not valid.")
    }

    @Test func aTokenSignedWithAPreviousSecretStillVerifiesDuringRotation() throws {
        let old = Authenticator(secret: Self.previous, now: { ManualClock().date })
        let token = try old.token(account: "c1", role: .customer)
        let (rotated, _) = Self.makeSUT(previousSecrets: [Self.previous])
        #expect(Self.rejection(rotated, token) == nil)
        let (retired, _) = Self.makeSUT()
        #expect(
            Self.rejection(retired, token) == "The token was signed with a key this server does not know (its kid).")
    }

    @Test func anUnknownKidIsRefusedEvenWhenTheSignatureMatchesTheCurrentSecret() {
        let (auth, clock) = Self.makeSUT(previousSecrets: [Self.previous])
        let token = Self.raw(
            #"{"sub":"c1","role":"customer","exp":\#(Self.seconds(clock) + 60)}"#, kid: "0000000000000000")
        #expect(Self.rejection(auth, token) == "The token was signed with a key this server does not know (its kid).")
    }

    @Test func aTokenWithoutKidIsCheckedAgainstTheCurrentSecretOnly() {
        let (auth, clock) = Self.makeSUT(previousSecrets: [Self.previous])
        let claims = #"{"sub":"c1","role":"customer","exp":\#(Self.seconds(clock) + 60)}"#
        #expect(Self.rejection(auth, Self.raw(claims)) == nil)
        #expect(Self.rejection(auth, Self.raw(claims, secret: Self.previous)) == "The token is not valid.")
    }

    @Test func aRefusedTokenIsAProblemJSON401WithItsDetail() async throws {
        let backend = TestBackend()
        let r = await backend.call("GET", "/v1/trips/active", token: Self.raw(#"{"sub":"c1","role":"customer"}"#))
        #expect(r.status == 401)
        #expect(r.headers["Content-Type"] == "application/problem+json")
        let problem = try #require(try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any])
        #expect(problem["detail"] as? String == "The token has no expiry: it needs a numeric exp claim.")
    }
}

/// Another spelling of a token's last base64url part: the same bytes to a lenient decoder.
enum Respelling: CaseIterable, Sendable {
    /// The last character's lowest bit set: a 32-byte MAC leaves its last character's two low bits unused.
    case lowBitFlipped
    case padded
    case doublyPadded

    func apply(_ token: String) -> String {
        switch self {
        case .padded: return token + "="
        case .doublyPadded: return token + "=="
        case .lowBitFlipped:
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            guard let last = token.last, let value = alphabet.firstIndex(of: last) else { return token }
            return String(token.dropLast()) + String(alphabet[value ^ 1])
        }
    }
}
