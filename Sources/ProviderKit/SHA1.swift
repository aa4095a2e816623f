/// SHA-1 (FIPS 180-4) for tus's `Upload-Checksum`, the one algorithm every tus checksum server accepts. Not for
/// security: it lets the server refuse a chunk the network damaged.
enum SHA1 {
    static func digest(_ message: some Collection<UInt8>) -> [UInt8] {
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0)
        var data = Array(message)
        let bitLength = UInt64(data.count) * 8
        data.append(0x80)
        while data.count % 64 != 56 { data.append(0) }
        for i in (0..<8).reversed() { data.append(UInt8(truncatingIfNeeded: bitLength >> (UInt64(i) * 8))) }
        var w = [UInt32](repeating: 0, count: 80)
        for block in stride(from: 0, to: data.count, by: 64) {
            for t in 0..<16 {
                let j = block + t * 4
                w[t] =
                    UInt32(data[j]) << 24 | UInt32(data[j + 1]) << 16 | UInt32(data[j + 2]) << 8 | UInt32(data[j + 3])
            }
            for t in 16..<80 { w[t] = (w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]).rotatedLeft(1) }
            var (a, b, c, d, e) = h
            for t in 0..<80 {
                let (f, k): (UInt32, UInt32) =
                    switch t {
                    case 0..<20: ((b & c) | (~b & d), 0x5A827999)
                    case 20..<40: (b ^ c ^ d, 0x6ED9EBA1)
                    case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1BBCDC)
                    default: (b ^ c ^ d, 0xCA62C1D6)
                    }
                let temp = a.rotatedLeft(5) &+ f &+ e &+ k &+ w[t]
                e = d; d = c; c = b.rotatedLeft(30); b = a; a = temp
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
        }
        return [h.0, h.1, h.2, h.3, h.4].flatMap { v in (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - $0 * 8)) } }
    }
}

extension UInt32 {
    fileprivate func rotatedLeft(_ n: UInt32) -> UInt32 { self << n | self >> (32 - n) }
}
