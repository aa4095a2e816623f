/// The encoded polyline format (Google's, as OSRM writes it with `geometries=polyline|polyline6`):
/// each coordinate as the zigzag-encoded difference from the one before, in 5-bit chunks offset by 63,
/// latitude first, scaled by 10^precision.
public enum Polyline {
    /// Why a string is not a polyline.
    public struct DecodeError: Error, Equatable, CustomStringConvertible {
        /// The character offset where reading stopped.
        public let offset: Int
        public let reason: String
        public var description: String { "not an encoded polyline at character \(offset): \(reason)" }
    }

    /// `coordinates` encoded with `precision` decimal places (6 for `polyline6`, 5 for `polyline`).
    public static func encode(_ coordinates: [Coordinate], precision: Int = 6) -> String {
        let scale = power(precision)
        var out: [UInt8] = []
        out.reserveCapacity(coordinates.count * 8)
        var lastLat = 0, lastLng = 0
        for c in coordinates {
            let lat = Int((c.lat * scale).rounded()), lng = Int((c.lng * scale).rounded())
            append(lat - lastLat, to: &out)
            append(lng - lastLng, to: &out)
            lastLat = lat; lastLng = lng
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The coordinates `text` encodes with `precision` decimal places; a malformed string is a `DecodeError`.
    /// Numbers, and the coordinates they add up to, are 32-bit as in the format's definition: a longer one is an error,
    /// so a hostile string can neither overflow the sums nor decode to values the encoder would spell otherwise.
    public static func decode(_ text: String, precision: Int = 6) throws(DecodeError) -> [Coordinate] {
        let scale = power(precision)
        let bytes = Array(text.utf8)
        var coordinates: [Coordinate] = []
        var index = 0, lat = 0, lng = 0
        while index < bytes.count {
            lat += try value(bytes, &index)
            guard index < bytes.count else {
                throw DecodeError(offset: index, reason: "a latitude without its longitude")
            }
            lng += try value(bytes, &index)
            guard Int32(exactly: lat) != nil, Int32(exactly: lng) != nil else {
                throw DecodeError(offset: index, reason: "a coordinate past 32 bits")
            }
            coordinates.append(Coordinate(lat: Double(lat) / scale, lng: Double(lng) / scale))
        }
        return coordinates
    }

    private static func power(_ precision: Int) -> Double {
        var scale = 1.0
        for _ in 0..<max(0, precision) { scale *= 10 }
        return scale
    }

    private static func append(_ delta: Int, to out: inout [UInt8]) {
        var v = UInt(bitPattern: delta < 0 ? ~(delta << 1) : delta << 1)
        while v >= 0x20 {
            out.append(UInt8((v & 0x1F) | 0x20) + 63)
            v >>= 5
        }
        out.append(UInt8(v) + 63)
    }

    private static func value(_ bytes: [UInt8], _ index: inout Int) throws(DecodeError) -> Int {
        var result: UInt = 0, shift: UInt = 0
        while true {
            guard index < bytes.count else {
                throw DecodeError(offset: index, reason: "the string ends inside a number")
            }
            let byte = bytes[index]
            guard (63...126).contains(byte) else {
                throw DecodeError(offset: index, reason: "character outside ? to ~")
            }
            guard shift < 35 else { throw DecodeError(offset: index, reason: "a number longer than 32 bits") }
            index += 1
            let chunk = UInt(byte - 63)
            result |= (chunk & 0x1F) << shift
            shift += 5
            if chunk < 0x20 { break }
        }
        guard result <= UInt32.max else { throw DecodeError(offset: index - 1, reason: "a number longer than 32 bits") }
        let signed = Int(bitPattern: result)
        return (signed & 1) != 0 ? ~(signed >> 1) : signed >> 1
    }
}
