import Testing
@testable import HTTPEngine

/// An answer's bytes and what follows them: keep-alive, HEAD, streams and the WebSocket upgrade, without a socket.
@Suite struct AnswerEncodingTests {
    let date = Array("Sun, 06 Nov 1994 08:49:37 GMT".utf8)
    static let upgradeHeaders = HTTPHeaders([
        ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("Sec-WebSocket-Version", "13"),
    ])

    func context(
        method: String = "GET", minorVersion: UInt8 = 1, keepAlive: Bool = true, headers: HTTPHeaders = HTTPHeaders()
    ) -> AnswerContext {
        AnswerContext(
            method: method, route: "/r", minorVersion: minorVersion, keepAlive: keepAlive, isHead: method == "HEAD",
            headers: headers, started: RequestStart.now)
    }

    /// The answer's text, what follows it (`next`, `close`, `stream`, `upgrade`) and the status sent.
    func encode(
        _ response: HTTPResponse, _ context: AnswerContext, draining: Bool = false
    ) -> (text: String, then: String, status: Int) {
        var buffer = Array("left over".utf8)
        let encoded = AnswerEncoding.encode(response, context, draining: draining, date: date, into: &buffer)
        let follows =
            switch encoded.then {
            case .next: "next"
            case .close: "close"
            case .stream(_, let chunked, let keepAlive): "stream chunked=\(chunked) keepAlive=\(keepAlive)"
            case .upgrade: "upgrade"
            }
        return (String(decoding: buffer, as: UTF8.self), follows, encoded.status)
    }

    static let stream = HTTPResponse.eventStream { _ in }
    static let session = HTTPResponse.webSocket { _ in }

    @Test func aKeptAliveAnswerCarriesItsLengthAndBodyAndTheNextRequestFollows() {
        let answer = encode(.text("hello"), context())
        #expect(answer.text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(answer.text.hasSuffix("Content-Length: 5\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\nhello"))
        #expect(!answer.text.contains("Connection:"))
        #expect(answer.then == "next")
        #expect(answer.status == 200)
    }

    @Test func anHTTP10ClientThatAskedToBeKeptAliveIsToldSo() {
        let answer = encode(.text("hello"), context(minorVersion: 0))
        #expect(answer.text.contains("Connection: keep-alive\r\n"))
        #expect(answer.then == "next")
    }

    /// A client that asks to close, a handler that says close, and a server that is draining all close the
    /// connection after the answer.
    @Test func aCloseFromTheClientTheHandlerOrADrainingServerClosesTheConnection() {
        let client = encode(.text("x"), context(keepAlive: false))
        #expect(client.text.contains("Connection: close\r\n"))
        #expect(client.then == "close")

        let draining = encode(.text("x"), context(), draining: true)
        #expect(draining.text.contains("Connection: close\r\n"))
        #expect(draining.then == "close")

        var response = HTTPResponse.text("x")
        response.headers.add("Connection", "close")
        let handler = encode(response, context(minorVersion: 0))
        #expect(handler.text.components(separatedBy: "Connection:").count == 2, "the handler's field alone")
        #expect(!handler.text.contains("keep-alive"))
        #expect(handler.then == "close")
    }

    @Test func headGetsTheLengthOfTheBodyButNotTheBody() {
        let answer = encode(.text("hello"), context(method: "HEAD"))
        #expect(answer.text.hasSuffix("Content-Length: 5\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n"))
        #expect(answer.then == "next")
    }

    @Test(arguments: [204, 304])
    func aStatusWithoutABodyHasNoLengthAndNoBody(status: Int) {
        let answer = encode(HTTPResponse(status: status, body: .bytes(Array("ignored".utf8))), context())
        #expect(!answer.text.contains("Content-Length"))
        #expect(answer.text.hasSuffix("\r\n\r\n"))
    }

    @Test func headOnAStreamIsItsHeadAloneAndTheConnectionServesOn() {
        let kept = encode(Self.stream, context(method: "HEAD"))
        #expect(kept.text.contains("Transfer-Encoding: chunked\r\n"))
        #expect(kept.text.hasSuffix("\r\n\r\n"))
        #expect(kept.then == "next")

        let old = encode(Self.stream, context(method: "HEAD", minorVersion: 0))
        #expect(old.text.contains("Connection: keep-alive\r\n"))
        #expect(!old.text.contains("Transfer-Encoding"))
        #expect(old.then == "next")

        #expect(encode(Self.stream, context(method: "HEAD"), draining: true).then == "close")
    }

    @Test func aStreamIsChunkedInHTTP11AndEndsWithTheConnectionInHTTP10() {
        let chunked = encode(Self.stream, context())
        #expect(chunked.text.contains("Transfer-Encoding: chunked\r\n"))
        #expect(chunked.then == "stream chunked=true keepAlive=true")

        let closing = encode(Self.stream, context(keepAlive: false))
        #expect(closing.then == "stream chunked=true keepAlive=false")

        let old = encode(Self.stream, context(minorVersion: 0))
        #expect(old.text.contains("Connection: close\r\n"))
        #expect(old.then == "stream chunked=false keepAlive=false")
    }

    @Test func anUpgradeIs101WithTheAcceptValueOfItsKey() {
        let answer = encode(Self.session, context(headers: Self.upgradeHeaders))
        #expect(answer.text.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
        #expect(answer.text.contains("Upgrade: websocket\r\nConnection: Upgrade\r\n"))
        #expect(answer.text.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"))
        #expect(answer.then == "upgrade")
        #expect(answer.status == 101)
    }

    @Test func anUpgradeThatIsNotOneIsRefusedAndTheConnectionServesOn() {
        var version8 = Self.upgradeHeaders
        version8.set("Sec-WebSocket-Version", "8")
        let wrongVersion = encode(Self.session, context(headers: version8))
        #expect(wrongVersion.status == 426)
        #expect(wrongVersion.text.contains("Sec-WebSocket-Version: 13\r\n"))
        #expect(wrongVersion.then == "next")

        var shortKey = Self.upgradeHeaders
        shortKey.set("Sec-WebSocket-Key", "c2hvcnQ=")
        #expect(encode(Self.session, context(headers: shortKey)).status == 400)

        var noUpgrade = Self.upgradeHeaders
        noUpgrade.set("Connection", "keep-alive")
        #expect(encode(Self.session, context(headers: noUpgrade)).status == 400)

        let head = encode(Self.session, context(method: "HEAD", headers: Self.upgradeHeaders))
        #expect(head.status == 400)
        #expect(!head.text.contains("101"))
        #expect(head.then == "next")
    }
}
