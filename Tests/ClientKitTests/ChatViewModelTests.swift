import Foundation
import Testing
import Synchronization
import ClientKit
import HTTPTransport
import EnRouteModels
import TestSupport

/// A REST pair that stores what it is sent (failing first as scripted) and pages a conversation it holds.
final class FakeChatAPI: ChatAPI {
    struct State {
        var failures: [any Error] = []
        var sends: [String] = []
        var stored: [ChatMessage] = []
        var closed: String?
        var historyAfters: [Int64] = []
    }
    let state = Mutex(State())
    let me: ChatRole
    init(me: ChatRole) { self.me = me }

    func failNext(_ errors: any Error...) { state.withLock { $0.failures += errors } }
    func written(by from: ChatRole, _ text: String, id: String) -> ChatMessage {
        state.withLock { s in
            let m = ChatMessage(
                messageId: id, tripId: "T1", seq: Int64(s.stored.count + 1), from: from, text: text,
                sentAt: Date(timeIntervalSince1970: 0))
            s.stored.append(m)
            return m
        }
    }
    var sends: [String] { state.withLock { $0.sends } }
    var historyAfters: [Int64] { state.withLock { $0.historyAfters } }

    func send(tripId: String, messageId: String, text: String) async throws -> ChatMessage {
        try state.withLock { s in
            s.sends.append(messageId)
            if !s.failures.isEmpty { throw s.failures.removeFirst() }
            if let existing = s.stored.first(where: { $0.messageId == messageId && $0.from == me }) { return existing }
            let m = ChatMessage(
                messageId: messageId, tripId: tripId, seq: Int64(s.stored.count + 1), from: me, text: text,
                sentAt: Date(timeIntervalSince1970: 0))
            s.stored.append(m)
            return m
        }
    }

    func history(tripId: String, after: Int64) async throws -> ChatHistory {
        state.withLock { s in
            s.historyAfters.append(after)
            return ChatHistory(
                tripId: tripId, messages: s.stored.filter { $0.seq > after }, closed: s.closed != nil, reason: s.closed,
                removesAt: nil)
        }
    }
}

/// A socket whose server side the test drives.
final class FakeChatSocket: ChatSocket {
    let frames: AsyncStream<ChatFrame>
    let server: AsyncStream<ChatFrame>.Continuation
    private let sentFrames = Mutex<[ChatFrame]>([])
    init() { (frames, server) = AsyncStream<ChatFrame>.makeStream() }
    var sent: [ChatFrame] { sentFrames.withLock { $0 } }
    func send(_ frame: ChatFrame) async throws { sentFrames.withLock { $0.append(frame) } }
    func close() { server.finish() }
}

/// Hands out a fresh socket per open and remembers them.
final class FakeChatConnection: ChatConnection {
    private let sockets = Mutex<[FakeChatSocket]>([])
    var opened: [FakeChatSocket] { sockets.withLock { $0 } }
    func open(tripId: String) async throws -> any ChatSocket {
        let socket = FakeChatSocket()
        sockets.withLock { $0.append(socket) }
        return socket
    }
}

@MainActor @Suite(.timeLimit(.minutes(1))) struct ChatViewModelTests {
    func makeSUT(
        me: ChatRole = .customer
    ) -> (vm: ChatViewModel, api: FakeChatAPI, connection: FakeChatConnection, clock: ManualClock) {
        let api = FakeChatAPI(me: me), connection = FakeChatConnection(), clock = ManualClock()
        let counter = Atomic<Int>(0)
        let vm = ChatViewModel(
            tripId: "T1", me: me, api: api, connection: connection, clock: clock,
            newMessageId: { "id-\(counter.add(1, ordering: .relaxed).newValue)" }, retryDelay: .seconds(3))
        return (vm, api, connection, clock)
    }

    @Test func aFailedSendStaysInTheOutboxAndIsResentWithTheSameMessageId() async throws {
        let (vm, api, _, clock) = makeSUT()
        api.failNext(HTTPClientError.network("offline"), HTTPClientError.timedOut)
        await vm.send("Blue door")
        #expect(vm.state.lines.map(\.status) == [.waiting])
        #expect(vm.state.pendingCount == 1)
        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .seconds(3))
        try await eventually("the second try") { api.sends.count == 2 }
        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .seconds(3))
        try await eventually("the message is stored") { vm.state.lines.first?.status == .sent }
        #expect(api.sends == ["id-1", "id-1", "id-1"], "every try carries the id made once")
        #expect(vm.state.lines.first?.seq == 1)
        #expect(vm.state.pendingCount == 0)
    }

    @Test func theOutboxKeepsItsOrderAndWaitsOutRetryAfter() async throws {
        let (vm, api, _, clock) = makeSUT()
        api.failNext(APIError.retryAfter(.seconds(10), status: 429))
        await vm.send("first")
        await vm.send("second")  // queued behind the first, which is waiting
        #expect(vm.state.lines.map(\.status) == [.waiting, .waiting])
        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .seconds(9))
        #expect(api.sends == ["id-1"], "nothing went again before Retry-After, the second message included")
        await clock.advance(by: .seconds(1))
        try await eventually("both are stored") { vm.state.lines.allSatisfy { $0.status == .sent } }
        #expect(api.sends == ["id-1", "id-1", "id-2"])
        #expect(vm.state.lines.map(\.text) == ["first", "second"])
        #expect(vm.state.lines.map(\.seq) == [1, 2])
    }

    @Test func aRefusedMessageLeavesTheOutboxWithTheReason() async throws {
        let (vm, api, _, _) = makeSUT()
        api.failNext(
            APIError.problem(
                Problem(title: "Content Too Large", status: 413, detail: "A message is at most 2000 bytes of UTF-8.")))
        await vm.send(String(repeating: "x", count: 3000))
        #expect(vm.state.lines.first?.status == .refused("A message is at most 2000 bytes of UTF-8."))
        #expect(vm.state.pendingCount == 0 && vm.state.showsComposer)
        await vm.send("short")
        #expect(vm.state.lines.first { $0.text == "short" }?.status == .sent)
    }

    @Test func messagesTypingAndReceiptsArriveLive() async throws {
        let (vm, api, connection, clock) = makeSUT()
        _ = api.written(by: .provider, "I'm outside", id: "p-1")
        let running = Task { await vm.run() }
        try await eventually("the socket is open") { vm.state.isLive }
        #expect(vm.state.lines.map(\.text) == ["I'm outside"], "the history first")
        let socket = try #require(connection.opened.first)

        socket.server.yield(.message(api.written(by: .provider, "Blue car", id: "p-2")))
        try await eventually("the live message") { vm.state.lines.count == 2 }
        try await eventually("its delivered receipt") { socket.sent.contains(.delivered(seq: 2, from: nil)) }

        socket.server.yield(.typing(from: .provider))
        try await eventually("typing shows") { vm.state.otherIsTyping }
        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .seconds(5))
        try await eventually("typing fades") { !vm.state.otherIsTyping }

        await vm.send("Coming down")
        #expect(vm.state.lines.last?.status == .sent && vm.state.lines.last?.seq == 3)
        socket.server.yield(.read(seq: 3, from: .provider))
        try await eventually("read") { vm.state.lines.last?.status == .read }
        await vm.markRead()
        #expect(socket.sent.contains(.read(seq: 2, from: nil)))

        socket.server.yield(.closed(reason: "The trip has ended."))
        await running.value
        #expect(vm.state.closedReason == "The trip has ended.")
        #expect(!vm.state.showsComposer, "the composer goes with the conversation")
        await vm.send("too late")
        #expect(vm.state.lines.count == 3 && api.sends.count == 1)
    }

    @Test func aDroppedSocketReconnectsAndResyncsAfterTheLastSequence() async throws {
        let (vm, api, connection, clock) = makeSUT()
        _ = api.written(by: .provider, "one", id: "p-1")
        let running = Task { await vm.run() }
        try await eventually("live") { vm.state.isLive }
        connection.opened[0].server.finish()
        try await eventually("offline") { !vm.state.isLive }
        _ = api.written(by: .provider, "written while offline", id: "p-2")
        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .seconds(3))
        try await eventually("live again") { vm.state.isLive && connection.opened.count == 2 }
        #expect(api.historyAfters == [0, 1])
        #expect(vm.state.lines.map(\.text) == ["one", "written while offline"])
        running.cancel()
        connection.opened[1].server.finish()
        await running.value
    }

    @Test func aClosedConversationShowsNoComposerAndOpensNoSocket() async throws {
        let (vm, api, connection, _) = makeSUT(me: .provider)
        _ = api.written(by: .customer, "Thanks!", id: "c-1")
        api.state.withLock { $0.closed = "The order was delivered." }
        await vm.run()
        #expect(vm.state.closedReason == "The order was delivered.")
        #expect(!vm.state.showsComposer)
        #expect(vm.state.lines.map(\.text) == ["Thanks!"])
        #expect(connection.opened.isEmpty)
    }

    @Test func aSendRefusedBecauseTheTripEndedClosesTheConversation() async throws {
        let (vm, api, _, _) = makeSUT()
        api.failNext(
            APIError.problem(Problem(title: "Conversation Closed", status: 409, detail: "The trip has ended.")))
        api.state.withLock { $0.closed = "The trip has ended." }
        await vm.send("Where are you?")
        #expect(vm.state.lines.first?.status == .refused("The trip has ended."))
        #expect(vm.state.closedReason == "The trip has ended." && !vm.state.showsComposer)
    }
}

extension ChatViewModelTests {
    @Test func aTripThatIsNotTheAccountsEndsTheScreenWithTheServersAnswer() async throws {
        let api = RefusingChatAPI(), connection = FakeChatConnection()
        let vm = ChatViewModel(
            tripId: "T1", me: .customer, api: api, connection: connection, clock: ManualClock(), newMessageId: { "x" })
        await vm.run()  // returns: no retry loop against a 404
        #expect(vm.state.unavailableReason == "No such trip.")
        #expect(!vm.state.showsComposer && connection.opened.isEmpty)
    }
}

/// Answers every request with the server's 404.
struct RefusingChatAPI: ChatAPI {
    static let notFound = APIError.problem(Problem(title: "Not Found", status: 404, detail: "No such trip."))
    func send(tripId: String, messageId: String, text: String) async throws -> ChatMessage { throw Self.notFound }
    func history(tripId: String, after: Int64) async throws -> ChatHistory { throw Self.notFound }
}
