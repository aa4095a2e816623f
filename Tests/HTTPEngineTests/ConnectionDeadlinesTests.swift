import Testing
@testable import HTTPEngine

@Suite struct ConnectionDeadlinesTests {
    let limits = ConnectionDeadlines.Limits(
        header: .seconds(10), body: .seconds(30), idle: .seconds(30), request: .seconds(5))

    func makeSUT(serial: UInt64 = 1, at now: Duration = .zero) -> ConnectionDeadlines {
        ConnectionDeadlines(serial: serial, now: now, limits: limits)
    }

    @Test func aHeadRunsToTheHeaderDeadlineFromTheAcceptAndActsOnce() {
        var sut = makeSUT()
        sut.received(now: .seconds(9))
        #expect(sut.expired(now: .seconds(9), limits: limits) == nil)
        #expect(sut.expired(now: .seconds(10), limits: limits) == .close)
        #expect(sut.expired(now: .seconds(20), limits: limits) == nil, "each deadline acts once")
    }

    @Test func aBodyGetsItsOwnDeadlineAndAHandlerItsOwn() {
        var sut = makeSUT()
        sut.headersReceived(now: .seconds(1), limits: limits)
        sut.received(now: .seconds(29))
        #expect(sut.expired(now: .seconds(30), limits: limits) == nil)
        #expect(sut.expired(now: .seconds(31), limits: limits) == .close)

        var handler = makeSUT()
        handler.headersReceived(now: .zero, limits: limits)
        handler.dispatched(now: .seconds(2), overrunnable: true, limits: limits)
        #expect(handler.expired(now: .seconds(6), limits: limits) == nil)
        #expect(handler.expired(now: .seconds(7), limits: limits) == .timeOut)
        #expect(
            handler.expired(now: .seconds(100), limits: limits) == nil, "a handler at work is not closed for silence")
    }

    @Test func anAnsweredOrStreamingRequestHasNoDeadline() {
        var answered = makeSUT()
        answered.dispatched(now: .zero, overrunnable: true, limits: limits)
        answered.answered()
        #expect(answered.expired(now: .seconds(1000), limits: limits) == nil)

        var upgraded = makeSUT()
        upgraded.exempted(permanently: true)
        upgraded.completed(now: .seconds(1), limits: limits)  // an upgraded socket stays exempt
        #expect(upgraded.phase == .exempt)
        #expect(upgraded.expired(now: .seconds(1000), limits: limits) == nil)

        var stream = makeSUT()
        stream.exempted(permanently: false)
        #expect(stream.expired(now: .seconds(1000), limits: limits) == nil)
        stream.completed(now: .seconds(1000), limits: limits)  // an SSE stream ends with its request
        #expect(stream.phase == .awaitingRequest)
    }

    @Test func aKeptAliveConnectionWaitsAtMostTheIdleTimeoutThenGetsAFreshHeadDeadline() {
        var sut = makeSUT()
        sut.headersReceived(now: .zero, limits: limits)
        sut.answered()
        sut.completed(now: .seconds(1), limits: limits)
        #expect(sut.phase == .awaitingRequest)
        for second in 2...25 { sut.received(now: .seconds(Int64(second))) }  // a trickle does not move it
        sut.requestLineReceived(now: .seconds(25), limits: limits)
        #expect(sut.phase == .head)
        sut.received(now: .seconds(34))
        #expect(sut.expired(now: .seconds(34), limits: limits) == nil)
        #expect(sut.expired(now: .seconds(35), limits: limits) == .close)

        var idle = makeSUT()
        idle.completed(now: .zero, limits: limits)
        idle.received(now: .seconds(29))
        #expect(idle.expired(now: .seconds(30), limits: limits) == .close)
    }

    @Test func aClientSilentForTheIdleTimeoutIsClosedBeforeItsPhaseDeadline() {
        let short = ConnectionDeadlines.Limits(
            header: .seconds(10), body: .seconds(30), idle: .seconds(1), request: .seconds(5))
        var sut = ConnectionDeadlines(serial: 1, now: .zero, limits: short)
        #expect(sut.expired(now: .milliseconds(999), limits: short) == nil)
        #expect(sut.expired(now: .seconds(1), limits: short) == .close)
    }

    @Test func theConnectionWaitingLongestForItsHeadGivesWayAndTheEarliestArrivalAtATie() {
        var busy = makeSUT(serial: 1, at: .seconds(1))
        busy.dispatched(now: .seconds(1), overrunnable: true, limits: limits)
        #expect(!busy.mayGiveWay, "a handler at work is never cut for a newcomer")
        var streaming = makeSUT(serial: 2)
        streaming.exempted(permanently: false)
        #expect(!streaming.mayGiveWay)
        let older = makeSUT(serial: 3, at: .seconds(2)), newer = makeSUT(serial: 4, at: .seconds(3))
        #expect(older.mayGiveWay && newer.mayGiveWay)
        #expect(ConnectionDeadlines.givesWayBefore(older, newer))
        #expect(!ConnectionDeadlines.givesWayBefore(newer, older))
        let first = makeSUT(serial: 5), second = makeSUT(serial: 6)
        #expect(ConnectionDeadlines.givesWayBefore(first, second))
    }
}
