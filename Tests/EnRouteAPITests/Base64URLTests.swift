import Foundation
import Testing
import EnRouteCrypto

/// Base64url as JOSE uses it, checked against Foundation's base64 as an independent oracle.
@Suite struct Base64URLTests {
    /// Foundation's base64 turned into unpadded base64url.
    static func oracle(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }

    @Test func everyLengthEncodesAsFoundationDoesAndDecodesBack() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...70 {
            // Bytes that reach both ends of the alphabet (`-` and `_` come from 62 and 63).
            let bytes = (0..<length).map { i in i % 3 == 0 ? 0xFF : UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            #expect(encoded == Self.oracle(bytes), "length \(length)")
            #expect(Base64URL.decode(encoded) == bytes, "length \(length)")
        }
    }

    @Test func unpaddedTextDecodes() {
        #expect(Base64URL.decode("YQ") == Array("a".utf8))
        #expect(Base64URL.decode("YWI") == Array("ab".utf8))
        #expect(Base64URL.decode("_-8") == [0xFF, 0xEF])
        #expect(Base64URL.decode("") == [])
    }

    /// One byte string has one spelling (RFC 4648 §3.5): padding, and pad bits that are not zero, are refused.
    @Test(arguments: [
        "YQ==", "YWI=", "YQ=", "YWJj====",  // padding, where base64url as JOSE uses it has none
        "YR", "YS", "YT", "Yf", "YWJ", "YWL", "_-9", "_-_",  // the last character's unused low bits set
    ])
    func anotherSpellingOfTheSameBytesIsRefused(_ text: String) {
        #expect(Base64URL.decode(text) == nil, "\(text)")
    }

    /// Of every two- and three-character text, exactly one per byte string decodes, and it is the encoder's.
    @Test func everyShortTextThatDecodesIsTheCanonicalSpelling() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var decoded = [0, 0], notCanonical: [String] = []
        for a in alphabet {
            for b in alphabet {
                let two = String([a, b])
                if let bytes = Base64URL.decode(two) {
                    decoded[0] += 1
                    if Base64URL.encode(bytes) != two { notCanonical.append(two) }
                }
                for c in alphabet {
                    let three = two + String(c)
                    guard let bytes = Base64URL.decode(three) else { continue }
                    decoded[1] += 1
                    if Base64URL.encode(bytes) != three { notCanonical.append(three) }
                }
            }
        }
        #expect(decoded == [256, 65_536])
        #expect(notCanonical.isEmpty, "\(notCanonical.prefix(5))")
    }

    @Test(arguments: ["a+b/", "YQ=a", "YQ=", "Y===", "YWJjZ", "YW J", "YQ\u{00e9}", "=", "YWI=="])
    func malformedTextIsRefused(_ text: String) {
        #expect(Base64URL.decode(text) == nil, "\(text)")
    }

    /// One spelling per byte string: a last character with unused bits set is refused, so a signature cannot be
    /// respelled. The first input is what the fuzz target found.
    @Test(arguments: ["eyJhbGkpXVCI0NiIsInODlhiJwIiwiZXhwIjSM", "YR", "YWJ", "YR==", "YWJ=", "Jz"])
    func aLastCharacterWithUnusedBitsSetIsRefused(_ text: String) {
        #expect(Base64URL.decode(text) == nil, "\(text)")
    }

    @Test func aTokenWhoseSignatureIsRespelledInItsUnusedBitsIsRefused() throws {
        let signer = HS256Signer(secret: Array("secret".utf8))
        let token = try signer.sign(claims: ["sub": "rider-1", "exp": 2_000_000_000])
        // A 32-byte signature is 43 characters: the last one's two low bits are unused.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let lastCharacter = try #require(token.last)
        let last = try #require(alphabet.firstIndex(of: lastCharacter))
        let respelled = String(token.dropLast()) + String(alphabet[last ^ 1])
        #expect(throws: HS256Signer.VerificationError.malformed) {
            try signer.verify(respelled, now: Date(timeIntervalSince1970: 1_900_000_000))
        }
    }
}
