import Foundation

@testable import EnRouteCrypto

/// Base64URL and ParsedJWT on arbitrary bytes. Properties: any bytes encode to the alphabet without padding and decode
/// back to themselves; a string that decodes re-encodes to the same spelling (less its padding) or is refused, so no
/// two spellings carry the same bytes; a token that parses has the three parts it was split into, its header and
/// claims re-signed parse and check, and with the signature's last character changed they never verify.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBase64JWT(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let encoded = Base64URL.encode(input)
    property(encoded.utf8.allSatisfy(isAlphabet), "encode gave \(encoded)")
    property(encoded.utf8.count == (size * 4 + 2) / 3, "encode gave \(encoded.utf8.count) characters for \(size)")
    property(Base64URL.decode(encoded) == input, "decode(encode(x)) != x for \(input)")
    let text = String(decoding: input, as: UTF8.self)
    if let decoded = Base64URL.decode(text) {
        var unpadded = Substring(text)
        while unpadded.hasSuffix("=") { unpadded.removeLast() }
        property(Base64URL.encode(decoded) == unpadded, "\(text.debugDescription) decodes but re-encodes differently")
    }
    checkToken(text)
    return 0
}

private func isAlphabet(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"),
        UInt8(ascii: "-"), UInt8(ascii: "_"):
        true
    default: false
    }
}

private let signer = HS256Signer(secret: Array("fuzz secret".utf8))

private func checkToken(_ text: String) {
    guard let parsed = try? ParsedJWT(text) else { return }
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    property(parts.count == 3 && parsed.signingInput == parts[0] + "." + parts[1], "signing input of \(text)")
    property(parsed.signature == Base64URL.decode(parts[2]), "signature of \(text)")
    // Re-signed under the fuzz key, the token parses and its signature checks; with the signature's last character
    // changed (in its unused bits or not) it is malformed or its signature fails, and it never verifies.
    let signed = parsed.signingInput + "." + Base64URL.encode(signer.mac(parsed.signingInput))
    guard let resigned = try? ParsedJWT(signed) else {
        property(false, "a re-signed token does not parse: \(signed)")
        return
    }
    property((try? resigned.checkSignature(signer.mac(resigned.signingInput))) != nil, "re-signed: \(signed)")
    var bytes = Array(signed.utf8)
    bytes[bytes.count - 1] = bytes.last == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
    let tampered = String(decoding: bytes, as: UTF8.self)
    if let changed = try? ParsedJWT(tampered) {
        property((try? changed.checkSignature(signer.mac(changed.signingInput))) == nil, "tampered: \(tampered)")
    }
    let verified = try? signer.verify(tampered, now: Date(timeIntervalSince1970: 0), leeway: 1e12)
    property(verified == nil, "a token whose signature's last character changed verifies: \(tampered)")
}
