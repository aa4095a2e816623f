import Foundation
import EnRouteModels
import HTTPEngine

/// A location batch read straight from its bytes, the highest-volume body the API takes: every provider sends one
/// every few seconds, and Foundation's `JSONDecoder` spent half of a 10-fix batch's instructions on it. Only the shape
/// the apps send is read here (the two members and each fix's six, in any order, once each, strings without escapes);
/// anything else is nil, and the caller decodes it with `JSONDecoder`, whose answer (the value or the precise
/// problem) is then the same as before.
enum LocationBatchJSON {
    /// The batch in `request`'s body, or nil when the body is not JSON of the common shape.
    static func decode(_ request: HTTPRequest) -> LocationBatch? {
        if let type = request.headers["Content-Type"]?.lowercased(), !type.hasPrefix("application/json"),
            !type.contains("+json")
        {
            return nil
        }
        return decode(request.body)
    }

    /// The batch `body` holds, or nil when it is not JSON of the common shape.
    static func decode(_ body: [UInt8]) -> LocationBatch? {
        body.withUnsafeBufferPointer { bytes in
            var reader = JSONBytes(bytes)
            return reader.batch()
        }
    }
}

/// A cursor over JSON bytes that reads only what a location batch holds.
private struct JSONBytes {
    let bytes: UnsafeBufferPointer<UInt8>
    var at = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func batch() -> LocationBatch? {
        var batchId: String?, fixes: [LocationFix]?
        guard take(UInt8(ascii: "{")) else { return nil }
        repeat {
            guard let key = key() else { return nil }
            if equal(key, "batchId"), batchId == nil {
                batchId = string()
                if batchId == nil { return nil }
            } else if equal(key, "fixes"), fixes == nil {
                fixes = fixList()
                if fixes == nil { return nil }
            } else {
                return nil
            }
        } while take(UInt8(ascii: ","))
        guard take(UInt8(ascii: "}")), let batchId, let fixes else { return nil }
        skipSpace()
        return at == bytes.count ? LocationBatch(batchId: batchId, fixes: fixes) : nil
    }

    private mutating func fixList() -> [LocationFix]? {
        guard take(UInt8(ascii: "[")) else { return nil }
        var fixes: [LocationFix] = []
        if take(UInt8(ascii: "]")) { return fixes }
        repeat {
            guard let fix = fix() else { return nil }
            fixes.append(fix)
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "]")) ? fixes : nil
    }

    private mutating func fix() -> LocationFix? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var numbers: [Double?] = [nil, nil, nil, nil, nil]  // lat, lng, heading, speed, accuracy
        var recordedAt: Date?
        repeat {
            guard let key = key() else { return nil }
            if let slot = Self.numberKeys.firstIndex(where: { equal(key, $0) }) {
                guard numbers[slot] == nil, let value = number() else { return nil }
                numbers[slot] = value
            } else if equal(key, "recordedAt"), recordedAt == nil {
                guard let text = string(), let date = ISO8601.parse(text) else { return nil }
                recordedAt = date
            } else {
                return nil
            }
        } while take(UInt8(ascii: ","))
        guard take(UInt8(ascii: "}")), let lat = numbers[0], let lng = numbers[1], let heading = numbers[2],
            let speed = numbers[3], let accuracy = numbers[4], let recordedAt
        else { return nil }
        return LocationFix(
            lat: lat, lng: lng, heading: heading, speed: speed, accuracy: accuracy, recordedAt: recordedAt)
    }

    private static let numberKeys: [StaticString] = ["lat", "lng", "heading", "speed", "accuracy"]

    /// A member's name and its colon.
    private mutating func key() -> Range<Int>? {
        guard let name = rawString(), take(UInt8(ascii: ":")) else { return nil }
        return name
    }

    /// A string's text; nil when its bytes are not UTF-8 (the decoder refuses those, and nothing is repaired here).
    private mutating func string() -> String? {
        guard let range = rawString() else { return nil }
        return String(validating: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// A string's bytes between its quotes; nil for one with an escape or a control character (left to the decoder).
    private mutating func rawString() -> Range<Int>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = at
        while at < bytes.count {
            let byte = bytes[at]
            if byte == UInt8(ascii: "\"") {
                at += 1
                return start..<(at - 1)
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            at += 1
        }
        return nil
    }

    /// A JSON number (RFC 8259 §6) of ordinary size: zero, or between 1e-300 and 1e300 in magnitude. One that rounds
    /// to zero or to infinity, or comes near, is left to the decoder, which refuses some of them.
    private mutating func number() -> Double? {
        skipSpace()
        let start = at
        if peek == UInt8(ascii: "-") { at += 1 }
        var bareZero = false
        if peek == UInt8(ascii: "0") {
            at += 1
            bareZero = true
        } else {
            guard digits() else { return nil }
        }
        if peek == UInt8(ascii: ".") {
            at += 1
            bareZero = false
            guard digits() else { return nil }
        }
        let significand = start..<at
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            // Foundation refuses `0e2` (but takes `-0e2` and `0e+2`): a zero with an exponent is left to it.
            guard !bareZero else { return nil }
            at += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { at += 1 }
            guard digits() else { return nil }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
        guard let value = Double(text) else { return nil }
        if value == 0 {
            let zeros = bytes[significand].allSatisfy { $0 < UInt8(ascii: "1") || $0 > UInt8(ascii: "9") }
            return zeros ? value : nil
        }
        return (1e-300...1e300).contains(value.magnitude) ? value : nil
    }

    private mutating func digits() -> Bool {
        let start = at
        while let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { at += 1 }
        return at > start
    }

    private var peek: UInt8? { at < bytes.count ? bytes[at] : nil }

    /// Skips white space, then takes `byte` if it comes next.
    private mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard peek == byte else { return false }
        at += 1
        return true
    }

    private mutating func skipSpace() {
        while let byte = peek,
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "\t")
        {
            at += 1
        }
    }

    private func equal(_ range: Range<Int>, _ name: StaticString) -> Bool {
        guard range.count == name.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        return UnsafeBufferPointer(rebasing: bytes[range]).elementsEqual(expected)
    }
}
