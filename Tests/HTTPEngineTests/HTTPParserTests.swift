import Testing
@testable import HTTPEngine

/// The request head parser and the chunked body decoder, on bytes alone.
@Suite struct HTTPParserTests {
    func parse(_ text: String, limit: Int = 8 * 1024) -> HTTPParser.Head {
        Array(text.utf8).withUnsafeBytes { HTTPParser.parseHead($0, limit: limit) }
    }

    func head(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> (RequestHead, Int) {
        guard case .complete(let head, let consumed) = parse(text) else {
            Issue.record("not a complete head: \(parse(text))", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        return (head, consumed)
    }

    func failure(_ text: String, limit: Int = 8 * 1024) -> Int? {
        if case .failed(let error) = parse(text, limit: limit) { return error.status }
        return nil
    }

    @Test func aRequestHeadGivesItsMethodTargetVersionAndFieldsTrimmed() throws {
        let text =
            "GET /v1/orders/42/tracking?x=1 HTTP/1.1\r\nHost: a\r\nAuthorization:   Bearer t  \r\nX-Empty:\r\n\r\nNEXT"
        let (head, consumed) = try head(text)
        #expect(head.method == "GET")
        #expect(head.target == "/v1/orders/42/tracking?x=1")
        #expect(head.minorVersion == 1)
        #expect(head.headers["authorization"] == "Bearer t")
        #expect(head.headers["X-Empty"] == "")
        #expect(head.hostCount == 1)
        #expect(head.keepAlive)
        #expect(head.framing == .none)
        #expect(consumed == text.utf8.count - 4, "what follows the empty line is the next request's")
    }

    @Test func bareLineFeedsAndEmptyLinesBeforeTheRequestLineAreAccepted() throws {
        let (head, consumed) = try head("\r\n\nPOST /a HTTP/1.0\nContent-Length: 3\n\n")
        #expect(head.method == "POST")
        #expect(head.framing == .length(3))
        #expect(!head.keepAlive, "HTTP/1.0 closes unless it asks to be kept alive")
        #expect(consumed == 39)
    }

    @Test func anIncompleteHeadSaysWhetherItsRequestLineIsIn() {
        guard case .incomplete(let first) = parse("GET /a HT") else { Issue.record("not incomplete"); return }
        #expect(!first)
        guard case .incomplete(let second) = parse("GET /a HTTP/1.1\r\nHost: a\r\n") else {
            Issue.record("not incomplete"); return
        }
        #expect(second)
    }

    @Test(
        arguments: [
            ("GET /a HTTP/1.1 extra\r\n\r\n", 400),
            ("GET  /a HTTP/1.1\r\n\r\n", 400),
            ("GET /a\r\n\r\n", 400),
            ("G(T /a HTTP/1.1\r\n\r\n", 400),
            ("GET /a HTTP/1.x\r\n\r\n", 400),
            ("GET /a HTTP/2.0\r\n\r\n", 505),
            ("GET /a HTTP/0.9\r\n\r\n", 505),
            ("GET /a HTTP/1.1\r\nHost : a\r\n\r\n", 400),
            ("GET /a HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400),
            ("GET /a HTTP/1.1\r\nNoColon\r\n\r\n", 400),
            ("GET /a HTTP/1.1\r\nX: a\u{01}b\r\n\r\n", 400),
            ("POST /a HTTP/1.1\r\nContent-Length: 12abc\r\n\r\n", 400),
            ("POST /a HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400),
            ("POST /a HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            ("POST /a HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
            ("POST /a HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400),
            ("POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ] as [(String, Int)])
    func malformedHeadsAreRefusedWithTheirStatus(text: String, status: Int) {
        #expect(failure(text) == status)
    }

    @Test func aRequestLineOverTheLimitIs414AndAHeadOverItIs431() {
        #expect(failure("GET /" + String(repeating: "a", count: 200), limit: 100) == 414)
        #expect(failure("GET /" + String(repeating: "a", count: 200) + " HTTP/1.1\r\n\r\n", limit: 100) == 414)
        #expect(failure("GET /a HTTP/1.1\r\n" + String(repeating: "X-A: b\r\n", count: 30), limit: 100) == 431)
        #expect(failure("GET /a HTTP/1.1\r\nX: " + String(repeating: "b", count: 200) + "\r\n\r\n", limit: 100) == 431)
    }

    @Test func equalRepeatedLengthsAreOneLength() throws {
        let (head, _) = try head("POST /a HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n")
        #expect(head.framing == .length(5))
    }

    @Test func connectionAndExpectOptionsAreRead() throws {
        #expect(try !head("GET /a HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n").0.keepAlive)
        #expect(try head("GET /a HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").0.keepAlive)
        #expect(
            try head("POST /a HTTP/1.1\r\nExpect: 100-Continue\r\nTransfer-Encoding: Chunked\r\n\r\n").0.expectsContinue
        )
        #expect(try head("POST /a HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n").0.framing == .chunked)
        #expect(
            try !head("POST /a HTTP/1.0\r\nExpect: 100-continue\r\n\r\n").0.expectsContinue,
            "HTTP/1.0 has no 100 Continue")
    }

    @Test func queryArgumentsAreFormDecodedAndTheFirstOfARepeatWins() {
        let arguments = HTTPParser.queryArguments("/a?b=x+y&c=%2F%zz&b=second&flag&&=empty")
        #expect(arguments == ["b": "x y", "c": "/%zz", "flag": "", "": "empty"])
        #expect(HTTPParser.queryArguments("/a").isEmpty)
    }

    // MARK: - Chunked bodies

    func decode(_ pieces: [String], keep: Bool = true) -> (body: String, outcome: ChunkedDecoder.Outcome, decoded: Int)
    {
        var decoder = ChunkedDecoder(), body: [UInt8] = [], decoded = 0
        var outcome = ChunkedDecoder.Outcome.needMore
        for piece in pieces {
            outcome = Array(piece.utf8).withUnsafeBytes {
                decoder.decode($0, into: &body, keep: keep, decoded: &decoded)
            }
            if outcome != .needMore { break }
        }
        return (String(decoding: body, as: UTF8.self), outcome, decoded)
    }

    @Test func aChunkedBodySplitAtEveryByteDecodesTheSame() {
        let wire = "5;ext=1\r\nhello\r\n7\r\n, world\r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\nGET"
        let whole = decode([wire])
        #expect(whole.body == "hello, world0123456789")
        #expect(whole.outcome == .done(consumed: wire.utf8.count - 3))
        let bytes = wire.utf8.map { String(decoding: [$0], as: UTF8.self) }
        let split = decode(bytes)
        #expect(split.body == whole.body)
        #expect(split.outcome == .done(consumed: 1), "the last byte of the body ends it")
    }

    @Test func bareLineFeedsEndChunkLinesToo() {
        #expect(decode(["3\nabc\n0\n\n"]).body == "abc")
    }

    @Test(arguments: ["zz\r\n", "\r\n", "3\r\nabcX", "3\r\nabc\r\n0\r\n\u{01}\r\n", "11111111111111111\r\n", "3\rX"])
    func malformedChunkingIsRefused(wire: String) {
        #expect(decode([wire]).outcome == .malformed)
    }

    @Test func aBodyPastItsLimitIsCountedNotKept() {
        let result = decode(["4\r\nabcd\r\n0\r\n\r\n"], keep: false)
        #expect(result.body.isEmpty)
        #expect(result.decoded == 4)
        #expect(result.outcome == .done(consumed: 14))
    }

    @Test func tooManyTrailerBytesAreRefused() {
        let trailer = "X-T: " + String(repeating: "t", count: ChunkedDecoder.maxTrailer) + "\r\n"
        #expect(decode(["0\r\n" + trailer + "\r\n"]).outcome == .malformed)
    }

    // MARK: - Paths

    @Test func pathsAreDecodedAndCutAtTheQuery() {
        #expect(HTTPParser.decodedPath("/items/a%20b?x=1") == "/items/a b")
        #expect(HTTPParser.decodedPath("/items/42%00junk") == nil)
        #expect(HTTPParser.decodedPath("/items/42%zz") == nil)
        #expect(HTTPParser.decodedPath("/plain") == "/plain")
    }
}
