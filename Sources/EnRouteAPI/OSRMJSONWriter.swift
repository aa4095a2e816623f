import EnRouteModels

/// JSON written straight into bytes for the OSRM-compatible answers: numbers with a fixed number of decimals
/// and trailing zeros trimmed (as OSRM prints them), strings escaped, polylines encoded in place.
struct OSRMJSONWriter {
    private(set) var bytes: [UInt8]

    init(capacity: Int = 2048) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func byte(_ b: UInt8) { bytes.append(b) }

    /// `"key":`
    mutating func key(_ text: StaticString) {
        bytes.append(UInt8(ascii: "\""))
        raw(text)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// A JSON string with `"`, `\` and control characters escaped.
    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\\")); bytes.append(b)
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(b)
            case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
            case ..<0x20:
                raw("\\u00")
                bytes.append(Self.hex[Int(b >> 4)]); bytes.append(Self.hex[Int(b & 0xF)])
            default: bytes.append(b)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    mutating func bool(_ value: Bool) { value ? raw("true") : raw("false") }

    mutating func integer(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var divisor: UInt = 1
        while magnitude / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude / divisor))
            magnitude %= divisor
            divisor /= 10
        }
    }

    private static let scales: [Double] = [
        1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000, 10_000_000_000,
    ]

    /// `value` rounded to `decimals` places, trailing zeros (and a bare point) dropped; non-finite values as `null`.
    mutating func number(_ value: Double, decimals: Int) {
        guard value.isFinite else { raw("null"); return }
        let scale = Self.scales[decimals]
        let scaled = (value * scale).rounded()
        guard abs(scaled) < 9e15 else { integer(Int(value.rounded())); return }
        var units = Int(scaled)
        if units < 0 { bytes.append(UInt8(ascii: "-")); units = -units }
        let pow = Int(scale)
        integer(units / pow)
        var fraction = units % pow
        guard fraction > 0 else { return }
        var places = decimals
        while fraction % 10 == 0 { fraction /= 10; places -= 1 }
        bytes.append(UInt8(ascii: "."))
        // Leading zeros of the fraction, then its digits.
        var leading = places - 1
        var probe = fraction
        while probe >= 10 { probe /= 10; leading -= 1 }
        for _ in 0..<max(0, leading) { bytes.append(UInt8(ascii: "0")) }
        integer(fraction)
    }

    /// `[lng,lat]` with six decimals, OSRM's order.
    mutating func location(_ c: Coordinate) {
        bytes.append(UInt8(ascii: "["))
        number(c.lng, decimals: 6)
        bytes.append(UInt8(ascii: ","))
        number(c.lat, decimals: 6)
        bytes.append(UInt8(ascii: "]"))
    }

    /// The geometry in the requested encoding: a polyline string or a GeoJSON LineString.
    mutating func geometry<C: Collection>(_ points: C, as format: OSRMGeometryFormat) where C.Element == Coordinate {
        switch format {
        case .polyline: polyline(points, scale: 1e5)
        case .polyline6: polyline(points, scale: 1e6)
        case .geojson:
            raw(#"{"coordinates":["#)
            var first = true
            for point in points {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                location(point)
            }
            raw(#"],"type":"LineString"}"#)
        }
    }

    /// An encoded polyline (latitude first, zigzag deltas in 5-bit chunks offset by 63) as a JSON string.
    private mutating func polyline<C: Collection>(_ points: C, scale: Double) where C.Element == Coordinate {
        bytes.append(UInt8(ascii: "\""))
        var lastLat = 0, lastLng = 0
        for point in points {
            let lat = Int((point.lat * scale).rounded()), lng = Int((point.lng * scale).rounded())
            chunk(lat - lastLat)
            chunk(lng - lastLng)
            lastLat = lat; lastLng = lng
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func chunk(_ delta: Int) {
        var v = UInt(bitPattern: delta < 0 ? ~(delta << 1) : delta << 1)
        while v >= 0x20 {
            put(UInt8((v & 0x1F) | 0x20) + 63)
            v >>= 5
        }
        put(UInt8(v) + 63)
    }

    /// A polyline character; `\` is the one that JSON needs escaped.
    private mutating func put(_ b: UInt8) {
        if b == UInt8(ascii: "\\") { bytes.append(b) }
        bytes.append(b)
    }
}
