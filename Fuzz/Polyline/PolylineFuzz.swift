import EnRouteModels

/// Polyline on arbitrary text, at both precisions. Properties: a string that decodes and spells each number in the
/// fewest characters encodes back to itself; any string that decodes encodes to one no longer that decodes to the same
/// coordinates; coordinates made from the bytes (within the valid ranges) decode from their encoding to within half a
/// unit of the last decimal place.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPolyline(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: input, as: UTF8.self)
    for precision in [5, 6] {
        if let coordinates = try? Polyline.decode(text, precision: precision) {
            let encoded = Polyline.encode(coordinates, precision: precision)
            if isShortest(input) { property(encoded == text, "\(text.debugDescription) encodes back as \(encoded)") }
            property(encoded.utf8.count <= size, "\(text.debugDescription) encodes back longer: \(encoded)")
            property(
                (try? Polyline.decode(encoded, precision: precision)) == coordinates, "\(encoded) decodes differently")
        }
        let made = coordinates(input)
        guard let decoded = try? Polyline.decode(Polyline.encode(made, precision: precision), precision: precision)
        else {
            property(false, "the encoding of \(made) does not decode")
            return 0
        }
        let unit = precision == 5 ? 1e-5 : 1e-6
        property(
            decoded.count == made.count
                && zip(decoded, made).allSatisfy {
                    abs($0.lat - $1.lat) <= unit / 2 + 1e-12 && abs($0.lng - $1.lng) <= unit / 2 + 1e-12
                }, "\(made) decodes as \(decoded)")
    }
    return 0
}

/// True when every number ends in a non-zero chunk or is one chunk (only such a spelling can come from `encode`).
private func isShortest(_ bytes: [UInt8]) -> Bool {
    var chunks = 0
    for byte in bytes {
        chunks += 1
        if byte &- 63 < 0x20 {
            if chunks > 1, byte == 63 { return false }
            chunks = 0
        }
    }
    return true
}

/// Coordinates from each 8 bytes of `bytes`, latitude and longitude scaled into their ranges.
private func coordinates(_ bytes: [UInt8]) -> [Coordinate] {
    stride(from: 0, to: bytes.count - 7, by: 8).map { i in
        let lat = bytes[i..<i + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let lng = bytes[i + 4..<i + 8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return Coordinate(
            lat: Double(lat) / Double(UInt32.max) * 180 - 90, lng: Double(lng) / Double(UInt32.max) * 360 - 180)
    }
}
