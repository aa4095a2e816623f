/// The magic bytes each allowed proof type starts with, checked once an upload is complete.
public enum ProofContent {
    /// True when `bytes` look like `contentType` (JPEG, PNG, HEIC or SVG).
    public static func matches(_ contentType: String, _ bytes: [UInt8]) -> Bool {
        switch contentType {
        case "image/jpeg": return bytes.starts(with: [0xFF, 0xD8, 0xFF])
        case "image/png": return bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        case "image/heic":
            // ISO BMFF: a box size, then `ftyp` and a HEIF brand.
            guard bytes.count >= 12, Array(bytes[4..<8]) == Array("ftyp".utf8) else { return false }
            return ["heic", "heix", "hevc", "heim", "heis", "mif1", "msf1"].contains(
                String(decoding: bytes[8..<12], as: UTF8.self))
        case "image/svg+xml":
            var text = Substring(String(decoding: bytes.prefix(4096), as: UTF8.self))
            if text.hasPrefix("\u{FEFF}") { text = text.dropFirst() }
            text = text.drop { $0.isWhitespace }
            return (text.hasPrefix("<?xml") || text.hasPrefix("<svg")) && text.contains("<svg")
        default: return false
        }
    }
}
