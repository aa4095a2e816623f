#if canImport(Glibc)
import Glibc
#endif

/// Why a request cannot be read: the status it is answered with before the connection closes.
struct ProtocolError: Error, Equatable {
    let status: Int
}

/// How a request's body is delimited (RFC 9112 §6).
enum BodyFraming: Equatable {
    case none
    case length(Int)
    case chunked
}

/// A request line and header block as read off the wire, with what the engine needs from them.
struct RequestHead {
    var method: String
    /// The request target as sent, before any decoding.
    var target: String
    /// The minor version of HTTP/1.x.
    var minorVersion: UInt8
    var headers: HTTPHeaders
    var framing: BodyFraming
    /// Whether the connection stays open after the answer (HTTP/1.1 unless `close`; HTTP/1.0 with `keep-alive`).
    var keepAlive: Bool
    /// `Expect: 100-continue` on an HTTP/1.1 request.
    var expectsContinue: Bool
    /// How many `Host` fields the request has.
    var hostCount: Int
}

/// Reads HTTP/1.x request heads (RFC 9112) from bytes; pure, so every rule is tested without a socket.
///
/// It is strict where leniency lets a request be read two ways: a field name with whitespace before its colon,
/// a folded line, both `Content-Length` and `Transfer-Encoding`, or disagreeing lengths are 400. It accepts a bare
/// LF as a line end and skips empty lines before the request line, as the RFC allows.
enum HTTPParser {
    /// What parsing the bytes so far gave.
    enum Head {
        /// More bytes are needed; `requestLine` says whether the request line is complete already.
        case incomplete(requestLine: Bool)
        /// A whole head, `consumed` bytes long.
        case complete(RequestHead, consumed: Int)
        case failed(ProtocolError)
    }

    /// Parses the head at the start of `bytes`; a request line longer than `limit` is 414, a head 431.
    static func parseHead(_ bytes: UnsafeRawBufferPointer, limit: Int) -> Head {
        let count = bytes.count
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count > 0 else {
            return .incomplete(requestLine: false)
        }
        var start = 0
        if let early = skipEmptyLines(base, count: count, limit: limit, start: &start) { return early }
        guard let lineEnd = find(10, base, from: start, to: count) else {
            return count - start > limit ? .failed(ProtocolError(status: 414)) : .incomplete(requestLine: false)
        }
        if lineEnd - start > limit { return .failed(ProtocolError(status: 414)) }
        var head: RequestHead
        switch requestLine(base, start, lineEnd) {
        case .success(let parsed): head = parsed
        case .failure(let error): return .failed(error)
        }
        var facts = FieldFacts()
        var line = lineEnd + 1
        while true {
            guard let end = find(10, base, from: line, to: count) else {
                return count - start > limit ? .failed(ProtocolError(status: 431)) : .incomplete(requestLine: true)
            }
            if end - start > limit { return .failed(ProtocolError(status: 431)) }
            var last = end
            if last > line, base[last - 1] == 13 { last -= 1 }
            // The empty line: the head is complete.
            if last == line { return complete(head, facts, consumed: end + 1) }
            if let error = field(base, from: line, to: last, into: &head, facts: &facts) { return .failed(error) }
            line = end + 1
        }
    }

    /// Skips the empty lines before a request line (RFC 9112 §2.2), moving `start` past them; a head when they alone
    /// decide it.
    private static func skipEmptyLines(
        _ base: UnsafePointer<UInt8>, count: Int, limit: Int, start: inout Int
    ) -> Head? {
        while start < count, base[start] == 13 || base[start] == 10 {
            if base[start] == 13 {
                guard start + 1 < count else { return .incomplete(requestLine: false) }
                guard base[start + 1] == 10 else { return .failed(ProtocolError(status: 400)) }
                start += 2
            } else {
                start += 1
            }
            if start > limit { return .failed(ProtocolError(status: 400)) }
        }
        return nil
    }

    /// What a head's fields said about its framing and persistence, gathered as they are read.
    private struct FieldFacts {
        var contentLength: Int?
        var chunked = false
        var transferEncoding = false
        var close = false
        var keepAliveToken = false
    }

    /// The field line from `line` to `last` (its line end excluded): added to `head`, and what it says noted in
    /// `facts`; the error it is refused with otherwise.
    private static func field(
        _ base: UnsafePointer<UInt8>, from line: Int, to last: Int, into head: inout RequestHead,
        facts: inout FieldFacts
    ) -> ProtocolError? {
        // A line that starts with whitespace continues the previous one (obs-fold): refused (RFC 9112 §5.2).
        if base[line] == 32 || base[line] == 9 { return ProtocolError(status: 400) }
        var colon = line
        while colon < last, base[colon] != UInt8(ascii: ":") {
            guard isTokenByte(base[colon]) else { return ProtocolError(status: 400) }
            colon += 1
        }
        guard colon < last, colon > line else { return ProtocolError(status: 400) }
        var valueStart = colon + 1, valueEnd = last
        while valueStart < valueEnd, base[valueStart] == 32 || base[valueStart] == 9 { valueStart += 1 }
        while valueEnd > valueStart, base[valueEnd - 1] == 32 || base[valueEnd - 1] == 9 { valueEnd -= 1 }
        for i in valueStart..<valueEnd where base[i] < 32 && base[i] != 9 || base[i] == 127 {
            return ProtocolError(status: 400)
        }
        let name = UnsafeBufferPointer(start: base + line, count: colon - line)
        let value = UnsafeBufferPointer(start: base + valueStart, count: valueEnd - valueStart)
        if let error = note(name, value, in: &head, facts: &facts) { return error }
        head.headers.add(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
        return nil
    }

    /// Notes what the field `name: value` says of the framing, persistence, `Expect` and `Host`.
    private static func note(
        _ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>, in head: inout RequestHead,
        facts: inout FieldFacts
    ) -> ProtocolError? {
        if equalsLowercased(name, "content-length") {
            guard let length = decimal(value) else { return ProtocolError(status: 400) }
            if let earlier = facts.contentLength, earlier != length { return ProtocolError(status: 400) }
            facts.contentLength = length
        } else if equalsLowercased(name, "transfer-encoding") {
            // Only `chunked`, once, and last: any other coding is not implemented here (RFC 9112 §6.1).
            guard head.minorVersion >= 1 else { return ProtocolError(status: 400) }
            for coding in tokens(value) {
                guard !facts.chunked else { return ProtocolError(status: 400) }
                guard equalsLowercased(coding, "chunked") else { return ProtocolError(status: 501) }
                facts.chunked = true
            }
            facts.transferEncoding = true
        } else if equalsLowercased(name, "connection") {
            for option in tokens(value) {
                if equalsLowercased(option, "close") { facts.close = true }
                if equalsLowercased(option, "keep-alive") { facts.keepAliveToken = true }
            }
        } else if equalsLowercased(name, "expect") {
            if head.minorVersion >= 1, equalsLowercased(value, "100-continue") { head.expectsContinue = true }
        } else if equalsLowercased(name, "host") {
            head.hostCount += 1
        }
        return nil
    }

    /// The head with its framing and persistence settled from `facts`, `consumed` bytes long.
    private static func complete(_ head: RequestHead, _ facts: FieldFacts, consumed: Int) -> Head {
        var head = head
        if facts.transferEncoding {
            guard facts.contentLength == nil, facts.chunked else { return .failed(ProtocolError(status: 400)) }
            head.framing = .chunked
        } else if let contentLength = facts.contentLength, contentLength > 0 {
            head.framing = .length(contentLength)
        }
        head.keepAlive = head.minorVersion >= 1 ? !facts.close : facts.keepAliveToken && !facts.close
        return .complete(head, consumed: consumed)
    }

    /// `METHOD SP target SP HTTP/1.x`, exactly.
    private static func requestLine(
        _ base: UnsafePointer<UInt8>, _ start: Int, _ lineEnd: Int
    ) -> Result<RequestHead, ProtocolError> {
        var end = lineEnd
        if end > start, base[end - 1] == 13 { end -= 1 }
        let bad = ProtocolError(status: 400)
        var i = start
        while i < end, base[i] != 32 {
            guard isTokenByte(base[i]) else { return .failure(bad) }
            i += 1
        }
        guard i > start, i < end else { return .failure(bad) }
        let method = String(decoding: UnsafeBufferPointer(start: base + start, count: i - start), as: UTF8.self)
        let targetStart = i + 1
        var j = targetStart
        while j < end, base[j] != 32 {
            guard base[j] > 32, base[j] != 127 else { return .failure(bad) }
            j += 1
        }
        guard j > targetStart, j < end else { return .failure(bad) }
        let target = String(
            decoding: UnsafeBufferPointer(start: base + targetStart, count: j - targetStart), as: UTF8.self)
        let version = j + 1
        guard end - version == 8 else { return .failure(bad) }
        let prefix: [UInt8] = [72, 84, 84, 80, 47]  // "HTTP/"
        for k in 0..<5 where base[version + k] != prefix[k] { return .failure(bad) }
        let major = base[version + 5], dot = base[version + 6], minor = base[version + 7]
        guard isDigit(major), dot == UInt8(ascii: "."), isDigit(minor) else { return .failure(bad) }
        guard major == UInt8(ascii: "1") else { return .failure(ProtocolError(status: 505)) }
        return .success(
            RequestHead(
                method: method, target: target, minorVersion: minor - UInt8(ascii: "0"), headers: HTTPHeaders(),
                framing: .none, keepAlive: true, expectsContinue: false, hostCount: 0))
    }

    private static func find(_ byte: UInt8, _ base: UnsafePointer<UInt8>, from: Int, to: Int) -> Int? {
        guard from < to, let hit = memchr(base + from, Int32(byte), to - from) else { return nil }
        return UnsafeRawPointer(hit) - UnsafeRawPointer(base)
    }

    static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    /// `tchar` of RFC 9110 §5.6.2.
    static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"),
            UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// ASCII case-insensitive comparison with a lowercase literal.
    private static func equalsLowercased(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let literal = lowercase.utf8Start
        for i in 0..<bytes.count {
            let b = bytes[i]
            let folded = b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") ? b | 0x20 : b
            guard folded == literal[i] else { return false }
        }
        return true
    }

    /// The comma-separated elements of a field value, trimmed; empty elements are skipped.
    private static func tokens(_ value: UnsafeBufferPointer<UInt8>) -> [UnsafeBufferPointer<UInt8>] {
        var out: [UnsafeBufferPointer<UInt8>] = []
        var i = 0
        while i <= value.count {
            var j = i
            while j < value.count, value[j] != UInt8(ascii: ",") { j += 1 }
            var a = i, b = j
            while a < b, value[a] == 32 || value[a] == 9 { a += 1 }
            while b > a, value[b - 1] == 32 || value[b - 1] == 9 { b -= 1 }
            if b > a, let base = value.baseAddress { out.append(UnsafeBufferPointer(start: base + a, count: b - a)) }
            i = j + 1
        }
        return out
    }

    /// A `Content-Length`: digits only. Lengths past what any limit allows read as `Int.max` (413, not 400).
    private static func decimal(_ value: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !value.isEmpty else { return nil }
        var n = 0
        for b in value {
            guard isDigit(b) else { return nil }
            if n > (Int.max - 9) / 10 { n = Int.max; continue }
            n = n * 10 + Int(b - UInt8(ascii: "0"))
        }
        return n
    }

    /// The arguments of a request target's query (`a=1&b=x+y`), `+` and `%XX` decoded, the first of a repeated name
    /// kept.
    static func queryArguments(_ target: String) -> [String: String] {
        guard let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return [:] }
        var arguments: [String: String] = [:]
        for pair in target.utf8[target.utf8.index(after: mark)...].split(
            separator: UInt8(ascii: "&"), omittingEmptySubsequences: true)
        {
            let name: Substring.UTF8View.SubSequence, value: Substring.UTF8View.SubSequence
            if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
                name = pair[..<equals]
                value = pair[pair.index(after: equals)...]
            } else {
                name = pair
                value = pair[pair.endIndex...]
            }
            let key = formDecoded(name)
            if arguments[key] == nil { arguments[key] = formDecoded(value) }
        }
        return arguments
    }

    /// `+` as a space and `%XX` as its byte; a malformed escape is kept as it is.
    private static func formDecoded(_ bytes: Substring.UTF8View.SubSequence) -> String {
        guard bytes.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
            return String(Substring(bytes))
        }
        let raw = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            if raw[i] == UInt8(ascii: "+") {
                out.append(32)
            } else if raw[i] == UInt8(ascii: "%"), i + 2 < raw.count, let high = hexValue(raw[i + 1]),
                let low = hexValue(raw[i + 2])
            {
                out.append(high << 4 | low)
                i += 2
            } else {
                out.append(raw[i])
            }
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The percent-decoded path of a request target (the part before `?`), or nil when an escape is
    /// malformed or the path holds a NUL or another control character: such a path names nothing.
    static func decodedPath(_ target: String) -> String? {
        // The usual target has nothing to decode or cut: use it as it is.
        if !target.utf8.contains(where: {
            $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "?") || $0 < 0x20 || $0 == 0x7F
        }) {
            return target
        }
        var raw = Array(target.utf8)
        if let query = raw.firstIndex(of: UInt8(ascii: "?")) { raw.removeSubrange(query...) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            var byte = raw[i]
            if byte == UInt8(ascii: "%") {
                guard i + 2 < raw.count, let high = hexValue(raw[i + 1]), let low = hexValue(raw[i + 2]) else {
                    return nil
                }
                byte = high << 4 | low
                i += 2
            }
            if byte < 0x20 || byte == 0x7F { return nil }
            bytes.append(byte)
            i += 1
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
