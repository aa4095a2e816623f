public import Foundation
public import EnRouteModels
import Synchronization
public import EnRouteLogging

/// A trip's chat: stores each client-made message once under the trip's next sequence, fans it out to the open chat
/// sockets, hands it to the notifier when the recipient has none, and removes a conversation `policy.retention` after
/// its trip ended (`sweep`, driven by `run` on the injected clock).
///
/// Who may read and write, the limits and the closing rules are `ChatPolicy`'s; the rate limit is a token bucket per
/// account on `now`. Live frames go to each listener's bounded stream; a listener that falls that far behind is ended
/// (its client resyncs with `GET …/messages?after=`) rather than silently missing a message.
public final class ChatService: Sendable {
    private struct Listener {
        let role: ChatRole?
        let continuation: AsyncStream<ChatFrame>.Continuation
    }

    public let policy: ChatPolicy
    public let store: any ChatStore
    private let trips: TripService
    private let notifier: (any ChatNotifier)?
    private let now: @Sendable () -> Date
    private let log: Logger
    private let listeners = Mutex<[String: [UInt64: Listener]]>([:])
    private let nextListener = Atomic<UInt64>(0)
    private let buckets = Mutex<[String: ChatPolicy.Bucket]>([:])
    /// Trips seen ending, with the time, until the sweep records it on their conversation.
    private let ends = Mutex<[String: Date]>([:])
    private let loop: PollLoop
    /// Frames a listener may have waiting before it is ended.
    public static let listenerBuffer = 256
    /// Largest page `history` answers.
    public static let pageLimit = 200

    /// The chat over `trips`; the sweep runs every `sweepInterval` on `clock` once `run()` is started.
    public init(
        store: any ChatStore, trips: TripService, policy: ChatPolicy = ChatPolicy(),
        notifier: (any ChatNotifier)? = nil,
        clock: any Clock<Duration>, sweepInterval: Duration = .seconds(60), now: @escaping @Sendable () -> Date,
        log: Logger = .discard
    ) {
        self.store = store; self.trips = trips; self.policy = policy; self.notifier = notifier; self.now = now;
        self.log = log
        loop = PollLoop(clock: clock, interval: sweepInterval)
        trips.onCommit { [weak self] old, new in self?.tripChanged(from: old, to: new) }
        // Who may hold a chat socket follows every version this node learns of, another node's commits included.
        trips.onChange { [weak self] old, new in self?.partiesChanged(from: old, to: new) }
    }

    // MARK: - Reading and writing

    /// The trip and what `account` may do in its chat; `ChatError.notFound` for anyone who may do nothing.
    public func access(_ tripId: String, for account: Account) throws -> (trip: TripRecord, access: ChatPolicy.Access) {
        guard let trip = try trips.cached(tripId) else { throw ChatError.notFound }
        let access = policy.access(account, to: trip)
        guard access != .none else { throw ChatError.notFound }
        return (trip, access)
    }

    /// Messages after `after`, in order (at most `limit`, capped at `pageLimit`), with whether the conversation is
    /// closed.
    public func history(
        _ tripId: String, for account: Account, after: Int64 = 0, limit: Int = ChatService.pageLimit
    ) async throws -> ChatHistory {
        let (trip, _) = try access(tripId, for: account)
        let page = min(max(1, limit), Self.pageLimit)
        let conversation = try await store.conversation(tripId: tripId)
        let messages = try await store.messages(tripId: tripId, after: max(0, after), limit: page + 1)
        let state = policy.state(of: trip)
        guard case .closed(let reason) = state else {
            return ChatHistory(
                tripId: tripId, messages: Array(messages.prefix(page)), closed: false, reason: nil, removesAt: nil,
                hasMore: messages.count > page)
        }
        if conversation?.removedAt != nil {
            return ChatHistory(
                tripId: tripId, messages: [], closed: true, reason: "\(reason) The conversation was removed.",
                removesAt: nil)
        }
        return ChatHistory(
            tripId: tripId, messages: Array(messages.prefix(page)), closed: true, reason: reason,
            removesAt: policy.removalTime(endedAt: endTime(of: trip, conversation: conversation)),
            hasMore: messages.count > page)
    }

    /// Stores `text` from `account` under `messageId` (or returns the message already stored under it: `created`
    /// false),
    /// publishes it to the trip's chat sockets and, when the other party has none open, to the notifier.
    public func send(
        _ tripId: String, messageId: String, text: String, by account: Account
    ) async throws -> (message: ChatMessage, created: Bool) {
        let (trip, access) = try access(tripId, for: account)
        guard case .party(let role) = access else { throw ChatError.readOnly }
        try policy.check(messageId: messageId)
        try policy.check(text)
        // A resend is answered from the store whatever has happened since: its first answer may have been lost.
        if let stored = try await store.message(tripId: tripId, from: role, messageId: messageId) {
            guard stored.text == text else { throw ChatError.messageIdReused }
            return (stored, false)
        }
        switch policy.state(of: trip) {
        case .closed(let reason), .waiting(let reason): throw ChatError.closed(reason: reason)
        case .open: break
        }
        try takeToken(account)
        let (message, created) = try await store.append(
            tripId: tripId, messageId: messageId, from: role, text: text, at: now())
        guard created else {
            guard message.text == text else { throw ChatError.messageIdReused }
            return (message, false)
        }
        publish(tripId, .message(message))
        let recipient = role == .customer ? trip.providerId : trip.customerId
        if let recipient, !isListening(tripId, role: role.other), let notifier {
            await notifier.deliverOffline(message, to: recipient)
        }
        return (message, true)
    }

    /// Passes a `typing`, `delivered` or `read` frame from `account` to the other party's sockets, stamped with its
    /// role.
    public func signal(_ tripId: String, _ frame: ChatFrame, by account: Account) throws {
        let (trip, access) = try access(tripId, for: account)
        guard case .party(let role) = access else { throw ChatError.readOnly }
        if case .closed(let reason) = policy.state(of: trip) { throw ChatError.closed(reason: reason) }
        let stamped: ChatFrame
        switch frame {
        case .typing: stamped = .typing(from: role)
        case .delivered(let seq, _): stamped = .delivered(seq: seq, from: role)
        case .read(let seq, _): stamped = .read(seq: seq, from: role)
        default: return
        }
        publish(tripId, stamped, skipping: role)
    }

    // MARK: - Live

    /// Frames of the trip's chat from now on for a socket of `role` (nil: ops); ends when the conversation closes, the
    /// party loses the trip, or the listener falls `listenerBuffer` frames behind. While it runs, `role` counts as
    /// connected.
    public func listen(_ tripId: String, role: ChatRole?) -> AsyncStream<ChatFrame> {
        let (stream, continuation) = AsyncStream<ChatFrame>.makeStream(
            bufferingPolicy: .bufferingOldest(Self.listenerBuffer))
        let key = nextListener.wrappingAdd(1, ordering: .relaxed).newValue
        listeners.withLock { $0[tripId, default: [:]][key] = Listener(role: role, continuation: continuation) }
        continuation.onTermination = { [weak self] _ in
            self?.listeners.withLock { all in
                all[tripId]?[key] = nil
                if all[tripId]?.isEmpty == true { all[tripId] = nil }
            }
        }
        return stream
    }

    /// True while a chat socket of `role` follows the trip.
    public func isListening(_ tripId: String, role: ChatRole) -> Bool {
        listeners.withLock { ($0[tripId] ?? [:]).values.contains { $0.role == role } }
    }

    /// Chat sockets following the trip now.
    public func listenerCount(_ tripId: String) -> Int { listeners.withLock { $0[tripId]?.count ?? 0 } }

    private func publish(
        _ tripId: String, _ frame: ChatFrame, skipping role: ChatRole? = nil,
        finish: (Listener) -> Bool = { _ in false }
    ) {
        let targets = listeners.withLock { Array(($0[tripId] ?? [:]).values) }
        for listener in targets {
            if let role, listener.role == role { continue }
            if case .dropped = listener.continuation.yield(frame) {
                listener.continuation.finish()
            } else if finish(listener) {
                listener.continuation.finish()
            }
        }
    }

    private func tripChanged(from old: TripRecord?, to new: TripRecord) {
        if old?.status.isActive ?? true, !new.status.isActive {
            ends.withLock { $0[new.id] = new.updatedAt }
            if case .closed(let reason) = policy.state(of: new) {
                publish(new.id, .closed(reason: reason), finish: { _ in true })
            }
            loop.wake()
        }
    }

    private func partiesChanged(from old: TripRecord?, to new: TripRecord) {
        guard new.status.isActive, old?.providerId != nil, old?.providerId != new.providerId else { return }
        // The trip changed hands: the former provider's sockets end.
        let gone = listeners.withLock { ($0[new.id] ?? [:]).values.filter { $0.role == .provider } }
        for listener in gone { listener.continuation.finish() }
    }

    // MARK: - Limits

    private func takeToken(_ account: Account) throws {
        let at = now(), policy = self.policy
        let wait = buckets.withLock { all -> TimeInterval? in
            var bucket = all[account.id] ?? ChatPolicy.Bucket(policy: policy, now: at)
            let wait = bucket.take(at: at, policy: policy)
            all[account.id] = bucket
            return wait
        }
        if let wait { throw ChatError.rateLimited(retryAfter: wait) }
    }

    // MARK: - Removal

    /// The time the trip ended: recorded on the conversation, seen by this process, or (after a restart) its last
    /// change.
    private func endTime(of trip: TripRecord, conversation: ChatConversation?) -> Date {
        conversation?.endedAt ?? ends.withLock { $0[trip.id] } ?? trip.updatedAt
    }

    /// Records the end of every conversation whose trip ended and removes those ended `policy.retention` ago; returns
    /// how
    /// many were removed.
    @discardableResult
    public func sweep() async throws -> Int {
        let at = now()
        let seen = ends.withLock { Set($0.keys) }
        for id in try await store.openConversations() {
            guard let trip = try trips.cached(id), !trip.status.isActive else { continue }
            try await store.markEnded(tripId: id, at: endTime(of: trip, conversation: nil))
        }
        // Every end seen before this sweep is recorded now; one without a conversation never needs it, since no
        // message can be written after the end.
        ends.withLock { all in for id in seen { all[id] = nil } }
        let due = try await store.conversations(endedBefore: at.addingTimeInterval(-policy.retention))
        for id in due {
            try await store.remove(tripId: id, at: at)
            log.info("chat: removed the conversation of trip \(id)")
        }
        let policy = self.policy
        buckets.withLock { $0 = $0.filter { !$0.value.isFull(at: at, policy: policy) } }
        return due.count
    }

    /// Sweeps now, then every sweep interval (or at once after a trip ends), until the task is cancelled.
    public func run() async {
        await loop.run {
            do { try await self.sweep() } catch { self.log.warning("chat: sweep failed: \(error)") }
        }
    }
}
