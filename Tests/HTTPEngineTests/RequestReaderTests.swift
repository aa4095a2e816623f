import Testing
@testable import HTTPEngine

/// Reading requests off a connection's bytes without a socket: heads, bodies by length and in chunks, their limits,
/// Host, `100 Continue`, the cap's refusal and what each request is dispatched to.
@Suite struct RequestReaderTests {
    /// What a connection sees reading some bytes, in order.
    enum Seen: Equatable {
        case needMore(requestLine: Bool)
        /// A complete request: its method, target and body.
        case request(String, String, body: String)
        /// A complete request whose body was over its limit and dropped.
        case tooLarge(String, String)
        case refused(status: Int)
        case sendContinue
        case unreadable(status: Int)
        case overflow
        case yield
    }

    let router: Router = {
        var router = Router()
        router.get("/json") { _ in .text("ok") }
        router.get("/items/{id}") { req in .text(try req.parameter("id")) }
        router.post("/upload", bodyLimit: 16) { req in .text("got \(req.body.count)") }
        return router
    }()
    let started = RequestStart.now

    func makeSUT(maxHeadBytes: Int = 1024) -> RequestReader { RequestReader(maxHeadBytes: maxHeadBytes) }

    /// Reads `bytes` as the connection does, answering `begin` for every head; returns what it saw, the requests
    /// completed and the bytes used.
    func read(
        _ bytes: [UInt8], with sut: inout RequestReader, refusedAtCap: Bool = false
    ) -> (seen: [Seen], requests: [ReadRequest], used: Int) {
        var seen: [Seen] = [], requests: [ReadRequest] = [], offset = 0
        func complete(_ request: ReadRequest) {
            requests.append(request)
            let (method, target) = (request.head.method, request.head.target)
            seen.append(
                request.overLimit
                    ? .tooLarge(method, target)
                    : .request(method, target, body: String(decoding: request.body, as: UTF8.self)))
        }
        sut.startTurn()
        bytes.withUnsafeBytes { raw in
            while true {
                let (event, used) = sut.read(UnsafeRawBufferPointer(rebasing: raw[offset...]))
                offset += used
                switch event {
                case .needMore(let requestLine): seen.append(.needMore(requestLine: requestLine)); return
                case .yield: seen.append(.yield); return
                case .unreadable(let status): seen.append(.unreadable(status: status)); return
                case .overflow: seen.append(.overflow); return
                case .request(let request): complete(request)
                case .head(let head):
                    switch sut.begin(head, refusedAtCap: refusedAtCap, router: router, started: started) {
                    case .refuse(let response, let context):
                        #expect(!context.keepAlive, "a refusal closes the connection")
                        seen.append(.refused(status: response.status))
                        return
                    case .body(let sendContinue): if sendContinue { seen.append(.sendContinue) }
                    case .request(let request): complete(request)
                    }
                }
            }
        }
        return (seen, requests, offset)
    }

    func read(_ text: String, with sut: inout RequestReader, refusedAtCap: Bool = false) -> [Seen] {
        read(Array(text.utf8), with: &sut, refusedAtCap: refusedAtCap).seen
    }

    @Test func pipelinedRequestsAreReadInOrderAndAPartialHeadWaits() {
        var sut = makeSUT()
        let text = "GET /json HTTP/1.1\r\nHost: x\r\n\r\nGET /items/7 HTTP/1.1\r\nHost: x\r\n\r\nGET /js"
        let result = read(Array(text.utf8), with: &sut)
        #expect(
            result.seen == [
                .request("GET", "/json", body: ""), .request("GET", "/items/7", body: ""),
                .needMore(requestLine: false),
            ])
        #expect(result.used == text.utf8.count - "GET /js".utf8.count, "the partial head is left for later")
    }

    @Test func aBodyByLengthArrivesInPiecesAndTheRequestCompletesWithIt() {
        var sut = makeSUT()
        #expect(
            read("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123", with: &sut)
                == [.needMore(requestLine: false)])
        #expect(read("456", with: &sut) == [.needMore(requestLine: false)])
        #expect(
            read("789GET /json HTTP/1.1\r\nHost: x\r\n\r\n", with: &sut) == [
                .request("POST", "/upload", body: "0123456789"), .request("GET", "/json", body: ""),
                .needMore(requestLine: false),
            ])
    }

    /// The request line's arrival is told once per request, so that a kept-alive connection's head deadline starts.
    @Test func theRequestLineIsToldOncePerRequest() {
        var sut = makeSUT()
        #expect(read("GET /json HT", with: &sut) == [.needMore(requestLine: false)])
        #expect(read("GET /json HTTP/1.1\r\nHo", with: &sut) == [.needMore(requestLine: true)])
        #expect(read("GET /json HTTP/1.1\r\nHost: x\r\n", with: &sut) == [.needMore(requestLine: false)])
        #expect(
            read("GET /json HTTP/1.1\r\nHost: x\r\n\r\nGET /json HTTP/1.1\r\n", with: &sut) == [
                .request("GET", "/json", body: ""), .needMore(requestLine: true),
            ])
    }

    @Test func aDeclaredBodyOverItsRoutesLimitIs413() {
        var sut = makeSUT()
        #expect(
            read("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n", with: &sut) == [
                .refused(status: 413)
            ])
        #expect(
            read(
                "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 16\r\n\r\n" + String(repeating: "a", count: 16),
                with: &sut)
                == [
                    .request("POST", "/upload", body: String(repeating: "a", count: 16)), .needMore(requestLine: false),
                ])
    }

    /// A chunked body over its limit is read to its end and dropped, so that the client gets its 413 answer.
    @Test func aChunkedBodyOverItsLimitIsReadToItsEndAndAnswered413() {
        var sut = makeSUT()
        let head = "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        let result = read(
            Array((head + "11\r\n" + String(repeating: "b", count: 17) + "\r\n0\r\n\r\n").utf8), with: &sut)
        #expect(result.seen == [.tooLarge("POST", "/upload"), .needMore(requestLine: false)])
        guard case .answer(let response, _) = result.requests[0].dispatch(draining: false) else {
            Issue.record("not answered")
            return
        }
        #expect(response.status == 413)
    }

    @Test func aChunkedBodyFarPastTheMostThatIsDiscardedClosesTheConnection() {
        var sut = makeSUT()
        let head = "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(read(head, with: &sut) == [.needMore(requestLine: false)])
        let size = RequestReader.maxDiscardedBody + 1
        let chunk = Array((String(size, radix: 16) + "\r\n").utf8) + [UInt8](repeating: 0x61, count: size)
        #expect(read(chunk, with: &sut).seen == [.overflow])
    }

    @Test func aChunkedBodyIsDecodedAndAMalformedOneIs400() {
        var sut = makeSUT()
        let head = "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(
            read(head + "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", with: &sut) == [
                .request("POST", "/upload", body: "abcde"), .needMore(requestLine: false),
            ])
        #expect(read(head + "zz\r\n", with: &sut) == [.unreadable(status: 400)])
        #expect(
            read("GET /json HTTP/1.1\r\nHost: x\r\n\r\n", with: &sut) == [
                .request("GET", "/json", body: ""), .needMore(requestLine: false),
            ], "the reader starts over")
    }

    @Test(
        arguments: [
            ("GET /json HTTP/2.0\r\nHost: x\r\n\r\n", 505),
            ("GET /" + String(repeating: "a", count: 2000) + " HTTP/1.1\r\n", 414),
            ("GET /json HTTP/1.1 junk\r\n\r\n", 400),
        ] as [(String, Int)])
    func bytesThatAreNotARequestAreAnsweredWithTheirStatus(text: String, status: Int) {
        var sut = makeSUT()
        let result = read(Array(text.utf8), with: &sut)
        #expect(result.seen == [.unreadable(status: status)])
        #expect(result.used == text.utf8.count, "everything is used")
    }

    /// An HTTP/1.1 request carries exactly one Host; an HTTP/1.0 one needs none.
    @Test(
        arguments: [
            ("GET /json HTTP/1.1\r\n\r\n", 400),
            ("GET /json HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
            ("GET /json HTTP/1.0\r\n\r\n", nil),
        ] as [(String, Int?)])
    func anHTTP11RequestNeedsExactlyOneHost(text: String, status: Int?) {
        var sut = makeSUT()
        let seen = read(text, with: &sut)
        if let status {
            #expect(seen == [.refused(status: status)])
        } else {
            #expect(seen.first == .request("GET", "/json", body: ""))
        }
    }

    @Test func aClientWaitingToSendItsBodyIsToldToContinue() {
        var sut = makeSUT()
        #expect(
            read("POST /upload HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n", with: &sut)
                == [.sendContinue, .needMore(requestLine: false)])
        #expect(read("ok", with: &sut) == [.request("POST", "/upload", body: "ok"), .needMore(requestLine: false)])
    }

    @Test func aConnectionRefusedAtTheCapIsAnswered503() {
        var sut = makeSUT()
        #expect(
            read("GET /json HTTP/1.1\r\nHost: x\r\n\r\n", with: &sut, refusedAtCap: true) == [.refused(status: 503)])
        let head = RequestHead(
            method: "GET", target: "/json", minorVersion: 1, headers: HTTPHeaders(), framing: .none, keepAlive: true,
            expectsContinue: false, hostCount: 1)
        guard
            case .refuse(let response, let context) = sut.begin(
                head, refusedAtCap: true, router: router, started: started)
        else {
            Issue.record("not refused")
            return
        }
        #expect(response.status == 503)
        #expect(response.headers["Retry-After"] == "1")
        #expect(response.headers["Connection"] == "close")
        #expect(!context.keepAlive)
    }

    /// One turn reads at most `requestsPerTurn` requests, so that the loop's other connections get theirs.
    @Test func aTurnReadsAtMostItsShareOfRequestsThenYields() {
        var sut = makeSUT()
        let many = String(repeating: "GET /json HTTP/1.1\r\nHost: x\r\n\r\n", count: RequestReader.requestsPerTurn + 1)
        let result = read(Array(many.utf8), with: &sut)
        #expect(result.requests.count == RequestReader.requestsPerTurn)
        #expect(result.seen.last == .yield)
        #expect(read(Array(Array(many.utf8)[result.used...]), with: &sut).requests.count == 1, "the next turn")
    }

    // MARK: - Dispatch

    func dispatch(_ text: String, draining: Bool = false) -> ReadRequest.Dispatch? {
        var sut = makeSUT()
        return read(Array(text.utf8), with: &sut).requests.first?.dispatch(draining: draining)
    }

    func status(_ dispatch: ReadRequest.Dispatch?) -> Int? {
        if case .answer(let response, _) = dispatch { return response.status }
        return nil
    }

    @Test func anUnknownPathIs404AMethodNotRoutedIs405AndARouteWhileDrainingIs503() {
        #expect(status(dispatch("GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n")) == 404)
        #expect(status(dispatch("GET /items/a%zz HTTP/1.1\r\nHost: x\r\n\r\n")) == 404, "a path that names nothing")
        #expect(status(dispatch("DELETE /json HTTP/1.1\r\nHost: x\r\n\r\n")) == 405)
        guard
            case .answer(let response, let context) = dispatch("GET /json HTTP/1.1\r\nHost: x\r\n\r\n", draining: true)
        else {
            Issue.record("not refused while draining")
            return
        }
        #expect(response.status == 503)
        #expect(response.headers["Connection"] == "close")
        #expect(context.route == "/json", "counted under its route")
    }

    @Test func aRouteRunsItsHandlerWithTheDecodedPathItsParametersAndQuery() {
        guard case .run(_, let request, let context) = dispatch("GET /items/a%20b?x=1&y=2 HTTP/1.1\r\nHost: x\r\n\r\n")
        else {
            Issue.record("the handler does not run")
            return
        }
        #expect(request.path == "/items/a b")
        #expect(request.pathParameters == ["id": "a b"])
        #expect(request.query == ["x": "1", "y": "2"])
        #expect(request.routePattern == "/items/{id}")
        #expect(context.route == "/items/{id}")
        #expect(context.keepAlive)
    }
}
