@testable import HTTPEngine

/// The largest head the target parses, small so that inputs reach the 414 and 431 limits.
private let limit = 1024

/// HTTPParser.parseHead on arbitrary bytes. Properties: a prefix of the input never completes a head the whole input
/// does not complete the same way, and a prefix that fails fails as the whole input does (so a head parses the same
/// however its bytes arrive); a complete head's fields are what the grammar allows; written back out as a request it
/// parses to the same head; its path decodes to a string without control characters or to nothing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPHead(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = parse(input, limit: limit)
    for k in splitPoints(size) where k < size {
        let prefix = parse(Array(input[..<k]), limit: limit)
        switch prefix {
        case .incomplete: break
        case .complete(let head, let consumed):
            guard case .complete(let wholeHead, let wholeConsumed) = whole else {
                property(false, "a prefix of \(k) bytes completes a head the whole input does not: \(whole)")
                return 0
            }
            property(consumed == wholeConsumed && same(head, wholeHead), "a prefix of \(k) bytes parses differently")
        case .failed(let error):
            guard case .failed(let wholeError) = whole else {
                property(false, "a prefix of \(k) bytes fails (\(error.status)) but the whole input gives \(whole)")
                return 0
            }
            property(
                error == wholeError,
                "a prefix of \(k) bytes fails with \(error.status), the whole with \(wholeError.status)")
        }
    }
    guard case .complete(let head, let consumed) = whole else { return 0 }
    property(consumed <= size, "consumed \(consumed) of \(size) bytes")
    checkGrammar(head)
    let written = serialise(head)
    guard case .complete(let again, let writtenConsumed) = parse(written, limit: Int.max / 2) else {
        property(false, "the head written back out does not parse: \(String(decoding: written, as: UTF8.self))")
        return 0
    }
    property(
        writtenConsumed == written.count, "the written head is read as \(writtenConsumed) of \(written.count) bytes")
    property(same(head, again), "the written head parses differently: \(String(decoding: written, as: UTF8.self))")
    if let path = HTTPParser.decodedPath(head.target) {
        property(!path.utf8.contains { $0 < 0x20 || $0 == 0x7F }, "decoded path \(path.debugDescription) has a control")
    }
    _ = HTTPParser.queryArguments(head.target)
    return 0
}

private func parse(_ bytes: [UInt8], limit: Int) -> HTTPParser.Head {
    bytes.withUnsafeBytes { HTTPParser.parseHead($0, limit: limit) }
}

private func same(_ a: RequestHead, _ b: RequestHead) -> Bool {
    a.method == b.method && a.target == b.target && a.minorVersion == b.minorVersion && a.framing == b.framing
        && a.keepAlive == b.keepAlive && a.expectsContinue == b.expectsContinue && a.hostCount == b.hostCount
        && a.headers.map(\.name) == b.headers.map(\.name) && a.headers.map(\.value) == b.headers.map(\.value)
}

/// `METHOD SP target SP HTTP/1.x CRLF`, one `name: value CRLF` per field, then CRLF.
private func serialise(_ head: RequestHead) -> [UInt8] {
    var text = "\(head.method) \(head.target) HTTP/1.\(head.minorVersion)\r\n"
    for field in head.headers { text += "\(field.name): \(field.value)\r\n" }
    return Array((text + "\r\n").utf8)
}

private func checkGrammar(_ head: RequestHead) {
    property(!head.method.isEmpty && head.method.utf8.allSatisfy(HTTPParser.isTokenByte), "method \(head.method)")
    property(!head.target.isEmpty && head.target.utf8.allSatisfy { $0 > 32 && $0 != 127 }, "target \(head.target)")
    property(head.minorVersion <= 9, "minor version \(head.minorVersion)")
    var hosts = 0
    var lengths: [String] = []
    var transferEncoding = false
    for field in head.headers {
        property(!field.name.isEmpty && field.name.utf8.allSatisfy(HTTPParser.isTokenByte), "field name \(field.name)")
        property(!field.value.utf8.contains { $0 < 32 && $0 != 9 || $0 == 127 }, "field value \(field.value)")
        property(field.value.utf8.first != 32 && field.value.utf8.last != 32, "field value not trimmed")
        switch field.name.lowercased() {
        case "host": hosts += 1
        case "content-length": lengths.append(field.value)
        case "transfer-encoding": transferEncoding = true
        default: break
        }
    }
    property(hosts == head.hostCount, "\(hosts) Host fields counted as \(head.hostCount)")
    switch head.framing {
    case .chunked:
        property(transferEncoding && lengths.isEmpty, "chunked framing without Transfer-Encoding alone")
    case .length(let n):
        property(n > 0 && !transferEncoding, "length framing \(n)")
        property(
            lengths.allSatisfy { Int($0) == n || Int($0) == nil && n == Int.max }, "lengths \(lengths) read as \(n)")
    case .none:
        property(!transferEncoding && lengths.allSatisfy { $0.allSatisfy { $0 == "0" } }, "no framing, but \(lengths)")
    }
}
