/// The bytes of an answer's head (RFC 9112 §4, §6), written by the engine; pure, so it is tested without a socket.
enum ResponseHead {
    /// What the `Connection` field of the answer says.
    enum Persistence {
        /// HTTP/1.1 kept alive: nothing to say.
        case implicit
        /// An HTTP/1.0 client that asked to be kept alive.
        case keepAlive
        /// The connection closes after this answer.
        case close
    }

    /// How the answer's body is delimited.
    enum Length {
        /// `Content-Length: n`.
        case known(Int)
        /// A stream in HTTP/1.1 chunks.
        case chunked
        /// A stream that ends when the connection closes (HTTP/1.0), or an answer that never has a body (1xx, 204,
        /// 304).
        case none
    }

    /// Appends the status line, `headers`, the framing and `Date` fields, and the empty line to `out`.
    static func write(
        status: Int, headers: HTTPHeaders, length: Length, persistence: Persistence, date: [UInt8],
        into out: inout [UInt8]
    ) {
        out.append(contentsOf: statusLine(status))
        for field in headers {
            // Names and values that would end a line early are made harmless rather than sent as two fields.
            appendSafe(field.name, into: &out)
            out.append(UInt8(ascii: ":"))
            out.append(32)
            appendSafe(field.value, into: &out)
            out.append(13); out.append(10)
        }
        switch length {
        case .known(let count):
            out.append(contentsOf: contentLengthPrefix)
            appendDecimal(count, into: &out)
            out.append(13); out.append(10)
        case .chunked:
            out.append(contentsOf: chunkedField)
        case .none:
            break
        }
        switch persistence {
        case .implicit: break
        case .keepAlive: out.append(contentsOf: keepAliveField)
        case .close: out.append(contentsOf: closeField)
        }
        out.append(contentsOf: datePrefix)
        out.append(contentsOf: date)
        out.append(13); out.append(10)
        out.append(13); out.append(10)
    }

    /// Whether an answer with `status` carries a body at all (RFC 9110 §6.4.1).
    static func hasBody(_ status: Int) -> Bool { !(status < 200 || status == 204 || status == 304) }

    private static let contentLengthPrefix = Array("Content-Length: ".utf8)
    private static let chunkedField = Array("Transfer-Encoding: chunked\r\n".utf8)
    private static let keepAliveField = Array("Connection: keep-alive\r\n".utf8)
    private static let closeField = Array("Connection: close\r\n".utf8)
    private static let datePrefix = Array("Date: ".utf8)

    private static func appendSafe(_ text: String, into out: inout [UInt8]) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { bytes in
            // The common case, a clean native string, is one copy; a field with CR, LF or NUL takes the slow path.
            if !bytes.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) {
                out.append(contentsOf: bytes)
            } else {
                for byte in bytes { out.append(byte == 13 || byte == 10 || byte == 0 ? 32 : byte) }
            }
        }
        if copied == nil {
            for byte in text.utf8 { out.append(byte == 13 || byte == 10 || byte == 0 ? 32 : byte) }
        }
    }

    static func appendDecimal(_ value: Int, into out: inout [UInt8]) {
        guard value > 0 else { out.append(UInt8(ascii: "0")); return }
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = value, count = 0
        withUnsafeMutableBytes(of: &digits) { raw in
            while n > 0 { raw[count] = UInt8(ascii: "0") + UInt8(n % 10); n /= 10; count += 1 }
            for i in stride(from: count - 1, through: 0, by: -1) { out.append(raw[i]) }
        }
    }

    /// `HTTP/1.1 <status> <reason>\r\n`, made once per status.
    static func statusLine(_ status: Int) -> [UInt8] {
        if status >= 100, status < 600, let line = statusLines[status - 100] { return line }
        return Array("HTTP/1.1 \(status) \(reason(status))\r\n".utf8)
    }

    private static let statusLines: [[UInt8]?] = (100..<600).map { status in
        reasons[status].map { Array("HTTP/1.1 \(status) \($0)\r\n".utf8) }
    }

    /// The reason phrase of RFC 9110 §15 for `status`; one by its class for codes it does not name.
    static func reason(_ status: Int) -> String {
        if let known = reasons[status] { return known }
        switch status / 100 {
        case 1: return "Informational"
        case 2: return "Success"
        case 3: return "Redirection"
        case 4: return "Client Error"
        default: return "Server Error"
        }
    }

    private static let reasons: [Int: String] = [
        100: "Continue", 101: "Switching Protocols",
        200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
        205: "Reset Content", 206: "Partial Content",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
        307: "Temporary Redirect", 308: "Permanent Redirect",
        400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 406: "Not Acceptable", 408: "Request Timeout", 409: "Conflict", 410: "Gone",
        411: "Length Required", 412: "Precondition Failed", 413: "Content Too Large", 414: "URI Too Long",
        415: "Unsupported Media Type", 416: "Range Not Satisfiable", 417: "Expectation Failed",
        421: "Misdirected Request",
        422: "Unprocessable Content", 425: "Too Early", 426: "Upgrade Required", 428: "Precondition Required",
        429: "Too Many Requests", 431: "Request Header Fields Too Large",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
        504: "Gateway Timeout", 505: "HTTP Version Not Supported",
    ]

    /// `100 Continue`, sent before a body the client waits to send (RFC 9110 §10.1.1).
    static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
}

/// The IMF-fixdate of RFC 9110 §5.6.7 (`Sun, 06 Nov 1994 08:49:37 GMT`), from seconds since 1970.
enum HTTPDate {
    static func format(secondsSince1970 t: Int64) -> [UInt8] {
        let days = t >= 0 ? t / 86_400 : (t - 86_399) / 86_400
        let secondsOfDay = Int(t - days * 86_400)
        // Civil date from days (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = Int(doy - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        let year = Int(yoe + era * 400 + (month <= 2 ? 1 : 0))
        let weekday = Int(((days % 7) + 11) % 7)  // 1970-01-01 was a Thursday
        var out: [UInt8] = []
        out.reserveCapacity(29)
        out.append(contentsOf: weekdays[weekday].utf8)
        out.append(contentsOf: ", ".utf8)
        two(day, &out)
        out.append(32)
        out.append(contentsOf: months[month - 1].utf8)
        out.append(32)
        let y = max(0, min(9999, year))
        two(y / 100, &out); two(y % 100, &out)
        out.append(32)
        two(secondsOfDay / 3600, &out); out.append(UInt8(ascii: ":"))
        two(secondsOfDay / 60 % 60, &out); out.append(UInt8(ascii: ":"))
        two(secondsOfDay % 60, &out)
        out.append(contentsOf: " GMT".utf8)
        return out
    }

    private static func two(_ n: Int, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "0") + UInt8(n / 10))
        out.append(UInt8(ascii: "0") + UInt8(n % 10))
    }

    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}
