import Foundation
public import EnRouteModels
import HTTPTransport
public import Observation

/// A trip's chat screen for the customer's and the provider's apps: the history, live messages, typing and receipts
/// over `ChatConnection`, and an outbox for what the user writes.
///
/// A message goes into the outbox with a `messageId` made once; a failed request leaves it there, marked waiting, and
/// it
/// is sent again with the same id after `retryDelay` (or the server's `Retry-After`), and on every reconnect, so the
/// server stores it once however often it is tried. A refusal (too long, closed...) takes it out with the reason. Once
/// the conversation is closed the composer is hidden and `run()` returns. Time comes from `clock`.
@MainActor @Observable
public final class ChatViewModel {
    /// What the screen shows.
    public private(set) var state = ChatViewState()

    @ObservationIgnored private let tripId: String
    @ObservationIgnored private let me: ChatRole
    @ObservationIgnored private let api: any ChatAPI
    @ObservationIgnored private let connection: any ChatConnection
    @ObservationIgnored private let clock: any Clock<Duration>
    @ObservationIgnored private let newMessageId: @Sendable () -> String
    @ObservationIgnored private let retryDelay: Duration
    @ObservationIgnored private let typingTimeout: Duration
    /// The outbox: message ids in the order written (their text is on their lines).
    @ObservationIgnored private var outbox: [String] = []
    @ObservationIgnored private var flushing = false
    @ObservationIgnored private var retry: Task<Void, Never>?
    /// True while the server's `Retry-After` runs: only the scheduled retry sends.
    @ObservationIgnored private var holding = false
    @ObservationIgnored private var typingReset: Task<Void, Never>?
    @ObservationIgnored private var socket: (any ChatSocket)?
    @ObservationIgnored private var lastSeq: Int64 = 0
    @ObservationIgnored private var readSent: Int64 = 0

    /// The chat of `tripId` as `me`; `newMessageId` makes each message's id (a UUID in the apps).
    public init(
        tripId: String, me: ChatRole, api: any ChatAPI, connection: any ChatConnection, clock: any Clock<Duration>,
        newMessageId: @escaping @Sendable () -> String, retryDelay: Duration = .seconds(3),
        typingTimeout: Duration = .seconds(5)
    ) {
        self.tripId = tripId; self.me = me; self.api = api; self.connection = connection; self.clock = clock
        self.newMessageId = newMessageId; self.retryDelay = retryDelay; self.typingTimeout = typingTimeout
    }

    // MARK: - Writing

    /// Puts `text` in the outbox and sends it; nothing when the conversation is closed or the text is blank.
    public func send(_ text: String) async {
        guard state.showsComposer, text.contains(where: { !$0.isWhitespace }) else { return }
        let id = newMessageId()
        state.lines.append(ChatLine(messageId: id, mine: true, text: text, status: .sending))
        outbox.append(id)
        await flush()
    }

    /// Sends the outbox in order, each with its own id; stops at the first failure and tries again later.
    public func flush() async {
        guard !flushing, !holding else {
            for id in outbox {
                if state.lines.first(where: { $0.mine && $0.messageId == id })?.status == .sending {
                    setStatus(id, .waiting)
                }
            }
            return
        }
        flushing = true
        defer { flushing = false }
        retry?.cancel()
        while let id = outbox.first, let line = state.lines.first(where: { $0.mine && $0.messageId == id }) {
            setStatus(id, .sending)
            do {
                let stored = try await api.send(tripId: tripId, messageId: id, text: line.text)
                outbox.removeAll { $0 == id }
                // Not a step of the history: earlier messages may still be unread from the server.
                receive(stored, inOrder: false)
            } catch is CancellationError {
                for id in outbox { setStatus(id, .waiting) }
                return
            } catch let APIError.retryAfter(delay, _) {
                wait(delay, holding: true)
                return
            } catch let APIError.problem(problem) where [403, 404, 409, 413, 422].contains(problem.status) {
                outbox.removeAll { $0 == id }
                setStatus(id, .refused(problem.detail ?? problem.title))
                // A 409 may mean the conversation closed: the history says so, with the reason.
                if problem.status == 409, let history = try? await api.history(tripId: tripId, after: lastSeq),
                    history.closed
                {
                    close(history.reason ?? problem.detail ?? "The conversation is closed.")
                }
            } catch {
                wait(retryDelay)
                return
            }
        }
    }

    /// Tells the other party that this one is typing (when live).
    public func typing() async { try? await socket?.send(.typing(from: nil)) }

    /// Tells the other party that everything it wrote so far was seen (call when the conversation is on screen).
    public func markRead() async {
        guard let seq = state.lines.filter({ !$0.mine }).compactMap(\.seq).max(), seq > readSent, let socket else {
            return
        }
        readSent = seq
        try? await socket.send(.read(seq: seq, from: nil))
    }

    // MARK: - Reading

    /// Loads the conversation, then follows it live, reconnecting (and resyncing) after `retryDelay` whenever the
    /// socket drops, until the conversation closes or the task is cancelled.
    public func run() async {
        while !Task.isCancelled, state.closedReason == nil, state.unavailableReason == nil {
            do {
                try await sync()
                if state.closedReason != nil { return }
                let socket = try await connection.open(tripId: tripId)
                self.socket = socket
                state.isLive = true
                await flush()
                for await frame in socket.frames {
                    await handle(frame)
                    if state.closedReason != nil { break }
                }
                socket.close()
            } catch is CancellationError {
                break
            } catch let APIError.problem(problem) where [401, 403, 404].contains(problem.status) {
                // Not this account's conversation: trying again would not change that.
                state.unavailableReason = problem.detail ?? problem.title
                break
            } catch {
                // Offline or the server failing: try again after the pause.
            }
            self.socket = nil
            state.isLive = false
            if state.closedReason != nil || state.unavailableReason != nil { return }
            do { try await clock.sleep(for: retryDelay) } catch { return }
        }
        socket?.close()
        socket = nil
        state.isLive = false
    }

    /// Every page after the last sequence seen.
    private func sync() async throws {
        while true {
            let page = try await api.history(tripId: tripId, after: lastSeq)
            for message in page.messages { receive(message) }
            if page.closed { close(page.reason ?? "The conversation is closed."); return }
            if !page.hasMore || page.messages.isEmpty { return }
        }
    }

    private func handle(_ frame: ChatFrame) async {
        switch frame {
        case .message(let message):
            receive(message)
            if message.from != me { try? await socket?.send(.delivered(seq: message.seq, from: nil)) }
        case .typing(let from) where from != me:
            state.otherIsTyping = true
            typingReset?.cancel()
            let clock = self.clock, timeout = typingTimeout
            typingReset = Task { [weak self] in
                do { try await clock.sleep(for: timeout) } catch { return }
                self?.state.otherIsTyping = false
            }
        case .delivered(let seq, let from) where from != me:
            mark(upTo: seq, .delivered, over: [.sent])
        case .read(let seq, let from) where from != me:
            mark(upTo: seq, .read, over: [.sent, .delivered])
        case .closed(let reason):
            close(reason)
        default:
            break
        }
    }

    /// A stored message: confirms my outbox line or adds the line, keeping the order by sequence. `inOrder` when it
    /// came
    /// from the history or the live socket, which hand out every message in sequence: then it moves the resync cursor.
    private func receive(_ message: ChatMessage, inOrder: Bool = true) {
        if inOrder { lastSeq = max(lastSeq, message.seq) }
        let mine = message.from == me
        if let index = state.lines.firstIndex(where: { $0.mine == mine && $0.messageId == message.messageId }) {
            state.lines[index].seq = message.seq
            state.lines[index].sentAt = message.sentAt
            if case .sending = state.lines[index].status { state.lines[index].status = .sent }
            if case .waiting = state.lines[index].status { state.lines[index].status = .sent }
            outbox.removeAll { $0 == message.messageId && mine }
        } else {
            state.lines.append(
                ChatLine(
                    messageId: message.messageId, mine: mine, text: message.text, seq: message.seq,
                    sentAt: message.sentAt, status: .sent))
        }
        if !mine { state.otherIsTyping = false }
        // Stored lines by sequence, then the outbox's lines in the order written.
        state.lines = state.lines.enumerated().sorted { a, b in
            switch (a.element.seq, b.element.seq) {
            case let (x?, y?): x < y
            case (.some, nil): true
            case (nil, .some): false
            case (nil, nil): a.offset < b.offset
            }
        }.map(\.element)
    }

    private func mark(upTo seq: Int64, _ status: ChatLine.Status, over from: [ChatLine.Status]) {
        for i in state.lines.indices
        where state.lines[i].mine && (state.lines[i].seq ?? .max) <= seq && from.contains(state.lines[i].status) {
            state.lines[i].status = status
        }
    }

    private func setStatus(_ id: String, _ status: ChatLine.Status) {
        if let i = state.lines.firstIndex(where: { $0.mine && $0.messageId == id }) { state.lines[i].status = status }
    }

    /// Marks the outbox waiting and flushes again after `delay` on the clock.
    private func wait(_ delay: Duration, holding: Bool = false) {
        for id in outbox { setStatus(id, .waiting) }
        retry?.cancel()
        self.holding = holding
        let clock = self.clock
        retry = Task { [weak self] in
            do { try await clock.sleep(for: delay) } catch { return }
            self?.holding = false
            await self?.flush()
        }
    }

    /// The conversation closed: no composer, and what the outbox still held is refused with the reason.
    private func close(_ reason: String) {
        state.closedReason = reason
        state.otherIsTyping = false
        for id in outbox { setStatus(id, .refused(reason)) }
        outbox = []
        retry?.cancel()
        holding = false
        typingReset?.cancel()
    }
}
