import Testing
@testable import HTTPEngine

/// A connection's rules without a socket: what it does with what its client sends, how answers queue behind what the
/// client has not read, how it ends, and which answer to a request in flight wins.
@Suite struct ConnectionStateMachineTests {
    final class Sink: ConnectionStream {
        func released() {}
    }

    final class Socket: ConnectionSocket {
        func feed(_ bytes: [UInt8]) {}
        func connectionClosed() {}
    }

    typealias SUT = ConnectionStateMachine

    let limits = ConnectionLimits(
        maxHeadBytes: 1024, maxAnswerBacklog: 4096,
        deadlines: .init(header: .seconds(10), body: .seconds(30), idle: .seconds(30), request: .seconds(5)),
        linger: .seconds(5))
    let date = Array("Sun, 06 Nov 1994 08:49:37 GMT".utf8)

    func makeSUT(now: Duration = .zero) -> SUT { SUT(serial: 1, now: now, limits: limits) }

    func context(minorVersion: UInt8 = 1, keepAlive: Bool = true) -> AnswerContext {
        AnswerContext(
            method: "GET", route: "/r", minorVersion: minorVersion, keepAlive: keepAlive, isHead: false,
            headers: HTTPHeaders(), started: RequestStart.now)
    }

    /// Writes `count` bytes, of which the socket takes `taken` when they may go straight to it.
    func write(_ sut: inout SUT, _ count: Int, socketTakes taken: Int = 0) {
        let bytes = [UInt8](repeating: 0x61, count: count)
        if sut.write(bytes) == .send { sut.sent(taken, of: bytes) }
    }

    func unsent(_ sut: SUT) -> [UInt8] { sut.outbound.withUnsentBytes { Array($0) } }

    // MARK: - Input

    @Test func inputIsServedAtOnceWhileTheConnectionIsIdle() {
        var sut = makeSUT()
        #expect(sut.bytesRead(10, buffered: 0, now: .seconds(1)) == .serve)
        #expect(sut.inputTurn() == .serve)
        #expect(sut.takeWaitingInput() == false)
    }

    /// Requests pipelined behind one whose handler runs wait for it; reading stops once a head and a body's worth wait.
    @Test func inputWhileAHandlerRunsWaitsAndReadingStopsPastAHeadAndABody() {
        var sut = makeSUT()
        _ = sut.dispatchedAsync(context(), now: .zero)
        #expect(sut.bytesRead(100, buffered: 0, now: .zero) == .hold(room: 100, pauseReading: false))
        let full = 1024 + Router.defaultBodyLimit
        #expect(sut.bytesRead(100, buffered: full - 100, now: .zero) == .hold(room: 100, pauseReading: true))
        #expect(sut.inputTurn() == .wait)
        #expect(sut.takeWaitingInput() == false, "the turn took the notice")
        _ = sut.bytesRead(1, buffered: 0, now: .zero)
        #expect(sut.takeWaitingInput() == true)
        #expect(sut.takeWaitingInput() == false, "asking clears it")
    }

    @Test func aStreamHoldsAtMostAHeadOfWhatItsClientSends() {
        var sut = makeSUT()
        sut.streamStarted(Sink(), chunked: true, keepAlive: true)
        #expect(sut.bytesRead(100, buffered: 1000, now: .zero) == .hold(room: 24, pauseReading: false))
        #expect(sut.takeWaitingInput() == true)
        #expect(sut.bytesRead(100, buffered: 1024, now: .zero) == .hold(room: 0, pauseReading: false))
        #expect(sut.takeWaitingInput() == false, "nothing kept, nothing to serve")
        #expect(sut.inputTurn() == .wait)
    }

    @Test func aWebSocketIsFedWhatItsClientSends() {
        var sut = makeSUT()
        let socket = Socket()
        sut.upgraded(socket)
        #expect(sut.bytesRead(10, buffered: 0, now: .zero) == .feed(socket))
        #expect(sut.inputTurn() == .feed(socket, resumeReading: true))
        #expect(sut.upgradedSocket === socket)
        #expect(sut.phase == .exempt)
    }

    @Test func aConnectionOnItsWayOutDropsWhatItsClientSends() {
        var lingering = makeSUT()
        #expect(lingering.finishWrites(now: .zero) == true)
        #expect(lingering.bytesRead(10, buffered: 0, now: .zero) == .drop)

        var cut = makeSUT()
        #expect(cut.shut() == true)
        #expect(cut.shut() == false, "once")
        #expect(cut.bytesRead(10, buffered: 0, now: .zero) == .drop)
    }

    // MARK: - Writing

    @Test func bytesGoStraightToTheSocketUntilItFillsThenQueueInOrder() {
        var sut = makeSUT()
        let first: [UInt8] = [1, 2, 3, 4, 5]
        #expect(sut.write(first) == .send)
        sut.sent(2, of: first)
        #expect(sut.write([6, 7]) == .queued)
        #expect(unsent(sut) == [3, 4, 5, 6, 7])
        sut.flushed(4)
        #expect(unsent(sut) == [7])
        sut.flushed(1)
        #expect(sut.outbound.isEmpty)
        #expect(sut.write([8]) == .send)
    }

    /// A client that pipelines and does not read gets no more answers than the backlog allows: its requests wait
    /// until it has read half of what waited.
    @Test func aPipeliningClientThatDoesNotReadWaitsUntilItHasReadHalfTheBacklog() {
        var sut = makeSUT()
        #expect(sut.requestDispatched(more: true) == true, "the next request is read at once")
        write(&sut, 5000)
        #expect(sut.requestDispatched(more: true) == false)
        #expect(sut.backlog == (5000, true))
        #expect(sut.bytesRead(10, buffered: 0, now: .zero) == .hold(room: 10, pauseReading: false))
        #expect(sut.inputTurn() == .wait)
        sut.flushed(1000)
        #expect(sut.socketDrained(now: .zero) == (false, false))
        sut.flushed(2000)
        #expect(sut.socketDrained(now: .zero) == (false, true))
        #expect(sut.backlog == (2000, false))
        #expect(sut.inputTurn() == .serve)
    }

    @Test func theNextRequestIsReadAtOnceOnlyWhileTheConnectionIsIdleAndOpen() {
        var busy = makeSUT()
        _ = busy.dispatchedAsync(context(), now: .zero)
        #expect(busy.requestDispatched(more: false) == false)
        #expect(busy.takeWaitingInput() == false, "nothing more was read")
        #expect(busy.requestDispatched(more: true) == false)
        #expect(busy.takeWaitingInput() == true, "what follows waits for the loop")

        var closing = makeSUT()
        write(&closing, 10)
        #expect(closing.finishWrites(now: .zero) == false)
        #expect(closing.requestDispatched(more: false) == false)
    }

    /// The last answer closes the write side once it is out, and the connection lingers to read what the client still
    /// sends before it is cut.
    @Test func aLastAnswerClosesTheWriteSideOnceItIsOutThenLingers() {
        var sut = makeSUT()
        write(&sut, 10, socketTakes: 4)
        var clockReads = 0
        func now() -> Duration {
            clockReads += 1
            return .seconds(2)
        }
        #expect(sut.finishWrites(now: now()) == false)
        #expect(sut.lifecycle == .closingWhenFlushed)
        #expect(sut.write([1]) == .queued, "an answer already on its way is still written")
        sut.flushed(7)
        #expect(clockReads == 0, "the clock is read only when the linger starts")
        #expect(sut.socketDrained(now: now()) == (true, false))
        #expect(clockReads == 1)
        #expect(sut.lifecycle == .lingering(until: .seconds(7)))
        #expect(sut.socketDrained(now: now()) == (false, false), "closed once")
        #expect(sut.due(now: .seconds(6)) == nil)
        #expect(sut.due(now: .seconds(7)) == .lingerOver)
        #expect(sut.lifecycle == .shut)
        #expect(sut.due(now: .seconds(8)) == nil)
    }

    // MARK: - Answers

    @Test func anAnswerSaysWhetherTheConnectionServesOnAndIsNotWrittenOnceItIsCut() throws {
        var sut = makeSUT()
        var buffer: [UInt8] = []
        let kept = try #require(sut.answer(.text("hi"), context(), draining: false, date: date, into: &buffer))
        guard case .next = kept.then else { Issue.record("\(kept.then)"); return }
        #expect(kept.status == 200)
        #expect(sut.phase == .busy)
        sut.keptAlive(now: .seconds(1))
        #expect(sut.phase == .awaitingRequest)

        let last = try #require(sut.answer(.text("hi"), context(), draining: true, date: date, into: &buffer))
        guard case .close = last.then else { Issue.record("\(last.then)"); return }

        _ = sut.shut()
        #expect(sut.answer(.text("hi"), context(), draining: false, date: date, into: &buffer) == nil)
    }

    @Test func aStreamClientFurtherBehindThanItsLimitIsCut() {
        var sut = makeSUT()
        let sink = Sink()
        sut.streamStarted(sink, chunked: true, keepAlive: true)
        #expect(sut.streamWrite(sink, count: 500, limit: 100) == .write, "nothing queued: any write goes out")
        write(&sut, 100)
        #expect(sut.streamWrite(Sink(), count: 10, limit: 200) == .gone, "another stream's")
        #expect(sut.socketWrite(Socket(), count: 10, limit: 200) == .gone)
        #expect(sut.streamWrite(sink, count: 100, limit: 200) == .write)
        #expect(sut.streamWrite(sink, count: 101, limit: 200) == .overflow)
        #expect(sut.lifecycle == .shut)
        #expect(sut.outbound.isEmpty)
        #expect(sut.streamWrite(sink, count: 1, limit: 200) == .gone)
    }

    @Test func aWebSocketClientFurtherBehindThanItsLimitIsCut() {
        var sut = makeSUT()
        let socket = Socket()
        sut.upgraded(socket)
        write(&sut, 100)
        #expect(sut.socketWrite(socket, count: 100, limit: 200) == .write)
        #expect(sut.socketWrite(socket, count: 101, limit: 200) == .overflow)
        #expect(sut.lifecycle == .shut)
    }

    @Test func aStreamEndsWithItsLastChunkAndTheConnectionServesOnWhenKeptAlive() {
        var kept = makeSUT()
        let sink = Sink()
        kept.streamStarted(sink, chunked: true, keepAlive: true)
        #expect(kept.phase == .exempt)
        #expect(kept.endStream(Sink(), failed: false, now: .zero) == .ignore)
        #expect(kept.endStream(sink, failed: false, now: .seconds(3)) == .ended(lastChunk: true, close: false))
        #expect(kept.phase == .awaitingRequest)
        #expect(kept.bytesRead(10, buffered: 0, now: .seconds(3)) == .serve)
        #expect(kept.endStream(sink, failed: false, now: .seconds(4)) == .ignore, "once")

        var old = makeSUT()
        old.streamStarted(sink, chunked: false, keepAlive: false)
        #expect(old.endStream(sink, failed: false, now: .zero) == .ended(lastChunk: false, close: true))

        var failed = makeSUT()
        failed.streamStarted(sink, chunked: true, keepAlive: true)
        #expect(failed.endStream(sink, failed: true, now: .zero) == .cut(shutDown: true))
        #expect(failed.endStream(sink, failed: false, now: .zero) == .cut(shutDown: false), "cut already")
    }

    // MARK: - The request in flight

    /// An answer that comes while the loop is still starting the handler waits for the loop; the first answer wins.
    @Test func anAnswerThatComesWhileTheHandlerStartsWaitsForTheLoopAndTheFirstWins() {
        var sut = makeSUT()
        let serial = sut.dispatchedAsync(context(), now: .zero)
        #expect(sut.phase == .busy)
        guard case .parked = sut.handlerFinished(serial: serial, response: .text("first")) else {
            Issue.record("not parked")
            return
        }
        guard case .ignore = sut.handlerFinished(serial: serial, response: .text("second")) else {
            Issue.record("a second answer was taken")
            return
        }
        guard case .answer(let response, _, let cancel) = sut.handlerStarted(serial: serial, task: Task {}) else {
            Issue.record("the parked answer was not handed to the loop")
            return
        }
        #expect(response.bodyBytes == Array("first".utf8))
        #expect(!cancel)
        #expect(!sut.hasRequestInFlight)
    }

    @Test func anAnswerAfterTheHandlerStartedIsWrittenAtOnceAndAStaleOneIsIgnored() {
        var sut = makeSUT()
        let serial = sut.dispatchedAsync(context(), now: .zero)
        guard case .running = sut.handlerStarted(serial: serial, task: Task {}) else {
            Issue.record("not running")
            return
        }
        guard case .ignore = sut.handlerFinished(serial: serial + 1, response: .text("stale")) else {
            Issue.record("a stale answer was taken")
            return
        }
        guard case .answer = sut.handlerFinished(serial: serial, response: .text("ok")) else {
            Issue.record("the answer was not written")
            return
        }
        #expect(!sut.hasRequestInFlight)
        #expect(sut.dispatchedAsync(context(), now: .zero) == serial + 1, "each request its own serial")
    }

    @Test func aTimeOutAsksForCancellationAndItsAnswerWinsOnce() {
        var sut = makeSUT()
        let serial = sut.dispatchedAsync(context(), now: .zero)
        #expect(sut.due(now: .seconds(5)) == .timeOut)
        _ = sut.handlerStarted(serial: serial, task: Task {})
        let overran = sut.handlerOverran()
        #expect(overran?.serial == serial)
        #expect(overran?.task != nil)
        guard case .answer = sut.handlerFinished(serial: serial, response: .text("503")) else {
            Issue.record("the time-out's answer was not written")
            return
        }
        #expect(sut.handlerOverran() == nil)
    }

    @Test func aTimeOutWhileTheHandlerStartsCancelsItOnceStarted() {
        var sut = makeSUT()
        let serial = sut.dispatchedAsync(context(), now: .zero)
        let overran = sut.handlerOverran()
        #expect(overran?.serial == serial)
        #expect(overran?.task == nil, "no task yet")
        guard case .cancel = sut.handlerStarted(serial: serial, task: Task {}) else {
            Issue.record("not cancelled")
            return
        }
    }

    // MARK: - Deadlines, the cap and the end

    @Test func onlyAConnectionWaitingForAHeadGivesWayAndOneAcceptedOverTheCapIsRefused() {
        var sut = makeSUT()
        #expect(sut.givingWay != nil)
        sut.refuse()
        #expect(sut.headersReceived(now: .seconds(1)) == true, "refused")
        #expect(sut.givingWay == nil, "its body is being read")

        var evicted = makeSUT()
        evicted.evict()
        #expect(evicted.givingWay == nil)
        #expect(evicted.phase == nil)
        #expect(evicted.due(now: .seconds(100)) == nil, "no deadline acts on an evicted connection")
    }

    @Test func theReceiveDeadlinesCutAConnectionThatTakesTooLong() {
        var head = makeSUT()
        head.requestLineReceived(now: .seconds(1))
        #expect(head.due(now: .seconds(9)) == nil)
        #expect(head.due(now: .seconds(10)) == .close)

        var body = makeSUT()
        _ = body.headersReceived(now: .seconds(1))
        body.dispatchedSync(now: .seconds(2))
        #expect(body.phase == .busy)
        #expect(body.due(now: .seconds(100)) == nil, "a synchronous handler has no deadline")
    }

    @Test func closingLetsGoOfTheRequestTheQueueAndTheStream() {
        var sut = makeSUT()
        let sink = Sink()
        sut.streamStarted(sink, chunked: true, keepAlive: true)
        write(&sut, 10)
        let held = sut.closed()
        guard case .stream(let released, _, _) = held.mode else {
            Issue.record("the stream was not handed back")
            return
        }
        #expect(released === sink)
        #expect(!held.wasEvicted)
        #expect(sut.outbound.isEmpty)
        #expect(sut.phase == nil)
        #expect(sut.write([1]) == .gone)
        #expect(sut.endStream(sink, failed: false, now: .zero) == .ignore)
        #expect(sut.shut() == false)
    }
}

/// Two actions are the same when they name the same socket (by identity) and the same numbers.
extension ConnectionStateMachine.Input: Equatable {
    static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case (.drop, .drop), (.serve, .serve): true
        case (.hold(let room, let pause), .hold(let otherRoom, let otherPause)):
            room == otherRoom && pause == otherPause
        case (.feed(let socket), .feed(let other)): socket === other
        default: false
        }
    }
}

extension ConnectionStateMachine.Turn: Equatable {
    static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case (.wait, .wait), (.serve, .serve): true
        case (.feed(let socket, let resume), .feed(let other, let otherResume)):
            socket === other && resume == otherResume
        default: false
        }
    }
}
