import Testing
@testable import HTTPEngine

@Suite struct ConnectionTableTests {
    typealias Table = ConnectionTable<String>

    func makeSUT() -> Table {
        Table(limits: .init(header: .seconds(10), body: .seconds(30), idle: .seconds(30), request: .seconds(5)))
    }

    func closedFDs(_ actions: [Table.Action]) -> [Int32] {
        actions.compactMap { if case .close(let fd) = $0 { fd } else { nil } }
    }

    @Test func aHeadRunsToTheHeaderDeadlineFromTheAccept() {
        var table = makeSUT()
        _ = table.opened(1, fd: 11, now: .zero, limit: 10)
        #expect(table.expired(now: .seconds(9)).isEmpty)
        #expect(closedFDs(table.expired(now: .seconds(10))) == [11])
        #expect(table.expired(now: .seconds(20)).isEmpty, "each deadline acts once")
    }

    @Test func aBodyGetsItsOwnDeadlineAndAHandlerItsOwn() {
        var table = makeSUT()
        _ = table.opened(1, fd: 11, now: .zero, limit: 10)
        table.headersReceived(1, now: .seconds(1))
        #expect(table.expired(now: .seconds(30)).isEmpty)
        table.dispatched(1, request: "slow", now: .seconds(2))
        let actions = table.expired(now: .seconds(7))
        #expect(actions.count == 1)
        if case .timeOut(let request)? = actions.first { #expect(request == "slow") } else { Issue.record("no time-out") }
    }

    @Test func anAnsweredOrStreamingRequestHasNoDeadline() {
        var table = makeSUT()
        _ = table.opened(1, fd: 11, now: .zero, limit: 10)
        table.headersReceived(1, now: .zero)
        table.dispatched(1, request: "a", now: .zero)
        table.answered(1)
        _ = table.opened(2, fd: 12, now: .zero, limit: 10)
        table.headersReceived(2, now: .zero)
        table.exempted(2, permanently: true)
        table.completed(2, now: .seconds(1))   // an upgraded socket stays exempt
        #expect(table.expired(now: .seconds(1000)).isEmpty)
    }

    @Test func aKeptAliveConnectionWaitsAtMostTheIdleTimeoutThenGetsAFreshHeadDeadline() {
        var table = makeSUT()
        _ = table.opened(1, fd: 11, now: .zero, limit: 10)
        table.headersReceived(1, now: .zero)
        table.answered(1)
        table.completed(1, now: .seconds(1))
        #expect(table.count(in: .awaitingRequest) == 1)
        table.requestLineReceived(1, now: .seconds(25))
        #expect(table.expired(now: .seconds(34)).isEmpty)
        #expect(closedFDs(table.expired(now: .seconds(35))) == [11])

        _ = table.opened(2, fd: 12, now: .zero, limit: 10)
        table.headersReceived(2, now: .zero)
        table.completed(2, now: .zero)
        #expect(closedFDs(table.expired(now: .seconds(30))) == [12])
    }

    @Test func overTheCapTheConnectionWaitingLongestForItsHeadGivesWay() {
        var table = makeSUT()
        _ = table.opened(1, fd: 11, now: .seconds(1), limit: 3)     // busy: never cut for a newcomer
        table.headersReceived(1, now: .seconds(1))
        table.dispatched(1, request: "a", now: .seconds(1))
        _ = table.opened(2, fd: 12, now: .seconds(2), limit: 3)     // trickling its head
        _ = table.opened(3, fd: 13, now: .seconds(3), limit: 3)
        guard case .close(let fd)? = table.opened(4, fd: 14, now: .seconds(4), limit: 3) else {
            Issue.record("nobody gave way"); return
        }
        #expect(fd == 12)
        #expect(table.liveCount == 3)
        table.closed(2)
        #expect(table.liveCount == 3)
        table.closed(4)
        #expect(table.liveCount == 2)
    }

    @Test func atEqualTimesTheEarliestArrivalGivesWay() {
        var table = makeSUT()
        for id in UInt(1)...3 { _ = table.opened(id, fd: Int32(10 + id), now: .zero, limit: 3) }
        guard case .close(let fd)? = table.opened(4, fd: 14, now: .zero, limit: 3) else { Issue.record("nobody gave way"); return }
        #expect(fd == 11)
    }

    @Test func overTheCapWithNothingWaitingNobodyIsCut() {
        var table = makeSUT()
        _ = table.opened(1, fd: 11, now: .zero, limit: 1)
        table.headersReceived(1, now: .zero)
        table.exempted(1, permanently: false)
        #expect(table.opened(2, fd: 12, now: .seconds(1), limit: 1) == nil)
        #expect(table.liveCount == 2)
    }
}
