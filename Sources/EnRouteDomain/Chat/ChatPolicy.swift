public import Foundation
public import EnRouteModels

/// The rules of a trip's chat, pure: who may read and write, when the conversation is open, closed and removed, and
/// what one message may be (UTF-8, size, rate per party).
public struct ChatPolicy: Sendable, Equatable {
    /// Largest message text, in UTF-8 bytes (sealed into a push it must stay well inside APNs' 4 KB).
    public var maxMessageBytes: Int
    /// Messages a party may send at once before the rate limit bites.
    public var burst: Int
    /// One more message is allowed every `refillInterval` seconds, up to `burst`.
    public var refillInterval: TimeInterval
    /// How long after the trip's end the messages are removed for the parties.
    public var retention: TimeInterval
    /// Longest client-made `messageId`, in bytes.
    public static let maxMessageIdBytes = 100

    /// 2000 bytes, 10 at once then one every 3 s, removed 24 h after the end.
    public init(
        maxMessageBytes: Int = 2000, burst: Int = 10, refillInterval: TimeInterval = 3,
        retention: TimeInterval = 24 * 3600
    ) {
        self.maxMessageBytes = maxMessageBytes; self.burst = max(1, burst);
        self.refillInterval = max(0, refillInterval); self.retention = retention
    }

    /// What an account may do in a trip's chat.
    public enum Access: Sendable, Equatable {
        /// The trip's customer or provider: read and write as that party.
        case party(ChatRole)
        /// Ops: read only.
        case readOnly
        /// Anyone else: the chat does not exist for them (404).
        case none
    }

    /// Only the trip's customer and its current provider write; ops read; merchants and everyone else see nothing.
    public func access(_ account: Account, to trip: TripRecord) -> Access {
        switch account.role {
        case .customer where trip.customerId == account.id: .party(.customer)
        case .provider where trip.providerId == account.id: .party(.provider)
        case .ops: .readOnly
        default: .none
        }
    }

    /// Whether messages may be written now, from the trip's state.
    public enum State: Sendable, Equatable {
        /// No provider yet: there is nobody to write to.
        case waiting(reason: String)
        /// Both parties are known and the trip is under way.
        case open
        /// The trip reached a terminal state: the conversation is read-only.
        case closed(reason: String)
    }

    /// The conversation's state for `trip`: closed once the trip is terminal, waiting until a provider holds it.
    public func state(of trip: TripRecord) -> State {
        if !trip.status.isActive {
            let reason =
                switch trip.status {
                case .ride(.completed): "The trip has ended."
                case .delivery(.delivered): "The order was delivered."
                case .ride(.noDriversFound): "No provider took the trip."
                default: "The trip was cancelled."
                }
            return .closed(reason: reason)
        }
        guard trip.providerId != nil else { return .waiting(reason: "No provider holds the trip yet.") }
        return .open
    }

    /// When messages of a trip that ended at `endedAt` are removed.
    public func removalTime(endedAt: Date) -> Date { endedAt.addingTimeInterval(retention) }

    /// The text of raw message bytes: refused when they are not UTF-8, empty or over `maxMessageBytes`.
    public func text(from bytes: some Collection<UInt8>) throws(ChatError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .invalidUTF8 }
        try check(text)
        return text
    }

    /// Refuses a text that is blank, over `maxMessageBytes` or holds U+0000.
    public func check(_ text: String) throws(ChatError) {
        guard text.utf8.count <= maxMessageBytes else { throw .tooLong(limit: maxMessageBytes) }
        guard text.contains(where: { !$0.isWhitespace }) else { throw .empty }
        // A WebSocket frame reaches here without the API's decoding, which refuses it for every JSON body.
        guard !text.contains("\0") else { throw .nul }
    }

    /// Refuses a `messageId` that is empty, too long or holds control characters or spaces.
    public func check(messageId: String) throws(ChatError) {
        guard !messageId.isEmpty, messageId.utf8.count <= Self.maxMessageIdBytes,
            messageId.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
        else { throw .invalidMessageId }
    }

    /// A party's token bucket: `burst` tokens, one back every `refillInterval`, measured on the caller's clock.
    public struct Bucket: Sendable, Equatable {
        public private(set) var tokens: Double
        public private(set) var updatedAt: Date

        /// A full bucket at `now`.
        public init(policy: ChatPolicy, now: Date) { tokens = Double(policy.burst); updatedAt = now }

        /// Takes one token at `now`; nil when taken, else the seconds until one is back.
        public mutating func take(at now: Date, policy: ChatPolicy) -> TimeInterval? {
            refill(at: now, policy: policy)
            if tokens >= 1 { tokens -= 1; return nil }
            return policy.refillInterval * (1 - tokens)
        }

        /// True when the bucket is full at `now` (then it can be forgotten).
        public func isFull(at now: Date, policy: ChatPolicy) -> Bool {
            var copy = self
            copy.refill(at: now, policy: policy)
            return copy.tokens >= Double(policy.burst)
        }

        private mutating func refill(at now: Date, policy: ChatPolicy) {
            let elapsed = max(0, now.timeIntervalSince(updatedAt))
            let gained = policy.refillInterval > 0 ? elapsed / policy.refillInterval : Double(policy.burst)
            tokens = min(Double(policy.burst), tokens + gained)
            updatedAt = max(updatedAt, now)
        }
    }
}
