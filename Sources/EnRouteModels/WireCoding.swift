public import Foundation

/// The JSON coders every EnRoute peer uses: ISO 8601 times, UTC, optional fractional seconds.
public enum WireCoding {
    /// An encoder that writes times as ISO 8601 (`2026-10-20T18:42:00Z`, milliseconds only when present).
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601.format(date))
        }
        return encoder
    }

    /// The encoder for records only EnRoute reads back (a stored trip, a payment attempt): the same times, keys in the
    /// order the type declares them, since sorting them cost a tenth of encoding a trip.
    public static func recordEncoder() -> JSONEncoder {
        let record = encoder()
        record.outputFormatting = [.withoutEscapingSlashes]
        return record
    }

    /// A decoder that reads ISO 8601 times with or without fractional seconds.
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = ISO8601.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected an ISO 8601 time, got \(text)")
            }
            return date
        }
        return decoder
    }
}

/// Fast ISO 8601 formatting and parsing in UTC, without locale or formatter state.
public enum ISO8601 {
    /// `2026-10-20T18:42:00Z`, or `2026-10-20T18:42:00.250Z` when the time has milliseconds.
    public static func format(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the ISO 8601 form of `date` as UTF-8 bytes (for hand-written JSON on hot paths).
    public static func append(_ date: Date, to out: inout [UInt8]) {
        var millis = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = millis / 1000
        millis -= seconds * 1000
        if millis < 0 { millis += 1000; seconds -= 1 }
        var days = seconds / 86_400
        var rem = seconds - days * 86_400
        if rem < 0 { rem += 86_400; days -= 1 }
        let (y, m, d) = civil(fromDays: days)
        digits(y, 4, &out); out.append(0x2D); digits(m, 2, &out); out.append(0x2D); digits(d, 2, &out)
        out.append(0x54)
        digits(rem / 3600, 2, &out); out.append(0x3A); digits((rem % 3600) / 60, 2, &out); out.append(0x3A);
        digits(rem % 60, 2, &out)
        if millis != 0 { out.append(0x2E); digits(millis, 3, &out) }
        out.append(0x5A)
    }

    /// `value` in decimal, zero-padded to `width` digits, most significant first, with no buffer of its own.
    private static func digits(_ value: Int64, _ width: Int, _ out: inout [UInt8]) {
        guard value >= 0 else { out.append(contentsOf: Array(String(value).utf8)); return }
        var scale: Int64 = 1
        for _ in 1..<max(width, 1) { scale *= 10 }
        while value / scale >= 10 { scale *= 10 }
        var v = value
        while scale > 0 {
            out.append(UInt8(v / scale) + 0x30)
            v %= scale
            scale /= 10
        }
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]`; nil when the text is not such a time.
    public static func parse(_ text: String) -> Date? {
        let b = Array(text.utf8)
        guard b.count >= 19, b[4] == 45, b[7] == 45, b[10] == 84 || b[10] == 116 || b[10] == 32, b[13] == 58,
            b[16] == 58
        else { return nil }
        func num(_ from: Int, _ len: Int) -> Int64? {
            var v: Int64 = 0
            for i in from..<(from + len) {
                let c = b[i]
                guard c >= 48, c <= 57 else { return nil }
                v = v * 10 + Int64(c - 48)
            }
            return v
        }
        guard let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2), let h = num(11, 2), let mi = num(14, 2),
            let s = num(17, 2),
            (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 { fraction += Double(b[i] - 48) * scale; scale /= 10; i += 1 }
            guard i > start else { return nil }
        }
        var offset: Int64 = 0
        guard i < b.count else { return nil }
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45, i + 6 == b.count, b[i + 3] == 58, let oh = num(i + 1, 2),
            let om = num(i + 4, 2)
        {
            offset = (oh * 3600 + om * 60) * (b[i] == 43 ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = days(fromCivil: y, mo, d)
        let seconds = days * 86_400 + h * 3600 + mi * 60 + s - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    // Howard Hinnant's civil-from-days algorithms (proleptic Gregorian calendar).
    private static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    private static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
