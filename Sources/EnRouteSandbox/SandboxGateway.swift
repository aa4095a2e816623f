public import Foundation
import Synchronization
public import EnRouteModels
public import EnRouteDomain

/// An in-process, stateful payment gateway that answers Stripe's documented test payment methods as Stripe does:
/// the default for `make demo` and the tests.
///
/// Every mutating call honours its idempotency key the way Stripe's API v1 does: the first answer (an intent or a
/// decline) is saved and replayed for the same key and parameters, never moving money twice; the same key with other
/// parameters is refused; rejections (bad token, wrong state, bad amount) are not saved, so they can be retried.
/// Webhooks it would send arrive on `events`, in the order the changes happened.
///
/// It runs for as long as the server does, so what it remembers is bounded: every intent still holding money or waiting
/// for a challenge, the newest `retention` intents that reached a final state, idempotency keys for 24 hours (Stripe's
/// rule) but no more than `retention` times four of them, and the newest `retention` events in `sentEvents()`.
public final class SandboxGateway: PaymentGateway {
    /// A gateway call, for fault injection.
    public enum Operation: String, Sendable, CaseIterable {
        case describe, authorize, retrieve, capture, cancel, charge
    }

    /// One of Stripe's test payment methods: its token, the card's display details and how each kind of payment ends.
    public struct TestCard: Sendable, Equatable {
        /// How a payment on the card ends.
        public enum Outcome: Sendable, Equatable {
            case approved
            /// The bank asks for a challenge (3-D Secure) before the hold is placed.
            case challenge
            case declined(GatewayDecline)
        }
        /// The `pm_…` token.
        public let token: String
        public let details: CardDetails
        /// A hold with the customer present (`authorize`).
        public let hold: Outcome
        /// An off-session charge (`charge`).
        public let offSession: Outcome
    }

    /// An intent with what it was asked for, as the sandbox keeps it.
    public struct Entry: Sendable, Equatable {
        public let intent: GatewayIntent
        /// The token it was asked on.
        public let paymentMethod: String
        public let customer: String?
        public let description: String
        /// True for an off-session charge, false for a hold.
        public let offSession: Bool
        public let created: Date
    }

    private static let declined = "Your card was declined."

    /// Stripe's test payment methods the sandbox knows, with the error and decline codes from Stripe's testing page.
    ///
    /// `pm_card_chargeCustomerFail` departs from Stripe on purpose: Stripe declines every charge on it once attached,
    /// holds included; here a hold succeeds and only off-session charges decline, so a ride can end in a debt.
    public static let testCards: [TestCard] = [
        TestCard(
            token: "pm_card_visa", details: CardDetails(brand: "visa", last4: "4242", expMonth: 12, expYear: 2034),
            hold: .approved, offSession: .approved),
        TestCard(
            token: "pm_card_mastercard",
            details: CardDetails(brand: "mastercard", last4: "4444", expMonth: 12, expYear: 2034),
            hold: .approved, offSession: .approved),
        TestCard(
            token: "pm_card_visa_chargeDeclined",
            details: CardDetails(brand: "visa", last4: "0002", expMonth: 12, expYear: 2034),
            hold: .declined(GatewayDecline(code: "card_declined", declineCode: "generic_decline", message: declined)),
            offSession: .declined(
                GatewayDecline(code: "card_declined", declineCode: "generic_decline", message: declined))),
        TestCard(
            token: "pm_card_visa_chargeDeclinedInsufficientFunds",
            details: CardDetails(brand: "visa", last4: "9995", expMonth: 12, expYear: 2034),
            hold: .declined(
                GatewayDecline(
                    code: "card_declined", declineCode: "insufficient_funds",
                    message: "Your card has insufficient funds.")),
            offSession: .declined(
                GatewayDecline(
                    code: "card_declined", declineCode: "insufficient_funds",
                    message: "Your card has insufficient funds."))),
        TestCard(
            token: "pm_card_authenticationRequired",
            details: CardDetails(brand: "visa", last4: "3184", expMonth: 12, expYear: 2034),
            hold: .challenge,
            offSession: .declined(
                GatewayDecline(
                    code: "authentication_required", declineCode: "authentication_required",
                    message: "Your card was declined. This transaction requires authentication."))),
        TestCard(
            token: "pm_card_chargeCustomerFail",
            details: CardDetails(brand: "visa", last4: "0341", expMonth: 12, expYear: 2034),
            hold: .approved,
            offSession: .declined(
                GatewayDecline(code: "card_declined", declineCode: "generic_decline", message: declined))),
    ]

    private struct Saved { let fingerprint: String; let answer: Result<GatewayIntent, PaymentGatewayError> }
    private struct Fault { let operation: Operation; let afterApplying: Bool }
    private struct State {
        var entries: [String: Entry] = [:]
        /// Intent ids, oldest first; ids of forgotten intents are skipped and compacted away.
        var order: [String] = []
        /// Intents that reached a final state, oldest first: the first forgotten when there are too many.
        var finished = Queue<String>()
        var saved: [String: Saved] = [:]
        /// Idempotency keys with when they were first used, oldest first.
        var savedOrder = Queue<(key: String, at: Date)>()
        var faults: [Fault] = []
        var sent = Queue<GatewayEvent>()
    }

    /// A first-in first-out list that drops from the front in O(1) (amortised).
    private struct Queue<Element> {
        private var items: [Element] = []
        private var head = 0
        var count: Int { items.count - head }
        var first: Element? { head < items.count ? items[head] : nil }
        var all: ArraySlice<Element> { items[head...] }
        mutating func append(_ item: Element) { items.append(item) }
        mutating func removeFirst() -> Element {
            let item = items[head]
            head += 1
            if head > 1024, head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
            return item
        }
    }

    /// How long an idempotency key is remembered (Stripe prunes keys once they are at least 24 hours old).
    static let idempotencyKeyLifetime: TimeInterval = 24 * 3600
    /// How many finished intents and sent events are remembered; keys are bounded at four times as many.
    public let retention: Int

    /// `"sandbox"`.
    public let name = "sandbox"
    /// The webhooks the sandbox would send, in order: `payment_intent.amount_capturable_updated` (a hold is placed),
    /// `payment_intent.succeeded` (after a capture or a charge), `payment_intent.payment_failed`,
    /// `payment_intent.canceled`
    /// and `charge.expired`. One consumer; kept until read.
    public let events: AsyncStream<GatewayEvent>
    private let continuation: AsyncStream<GatewayEvent>.Continuation
    private let state = Mutex(State())
    private let cards: [String: TestCard]
    private let base: Mutex<URL>
    private let ids: any IDGenerator
    private let now: @Sendable () -> Date

    /// A sandbox whose bank challenges live under `baseURL` (`<base>/v1/payments/sandbox/challenges/<intent>`), naming
    /// intents `pi_<id>` and events `evt_<id>` from `ids`, and dating events by `now`.
    public init(baseURL: URL, ids: any IDGenerator, retention: Int = 1_000, now: @escaping @Sendable () -> Date) {
        self.base = Mutex(baseURL); self.ids = ids; self.now = now
        self.retention = max(1, retention)
        self.cards = Dictionary(uniqueKeysWithValues: Self.testCards.map { ($0.token, $0) })
        (events, continuation) = AsyncStream.makeStream(of: GatewayEvent.self, bufferingPolicy: .unbounded)
    }

    deinit { continuation.finish() }

    // MARK: - PaymentGateway

    public func describe(token: String) async throws(PaymentGatewayError) -> CardDetails {
        try state.withLock { (s: inout State) throws(PaymentGatewayError) -> CardDetails in
            if let fault = takeFault(.describe, in: &s) { throw fault }
            guard let card = cards[token] else { throw .rejected(Self.noSuchMethod(token)) }
            return card.details
        }
    }

    public func authorize(_ request: AuthorizationRequest) async throws(PaymentGatewayError) -> GatewayIntent {
        try idempotent(.authorize, key: request.idempotencyKey, fingerprint: Self.fingerprint("authorize", request)) {
            s throws(PaymentGatewayError) in
            try self.pay(request, offSession: false, in: &s)
        }
    }

    public func charge(_ request: AuthorizationRequest) async throws(PaymentGatewayError) -> GatewayIntent {
        try idempotent(.charge, key: request.idempotencyKey, fingerprint: Self.fingerprint("charge", request)) {
            s throws(PaymentGatewayError) in
            try self.pay(request, offSession: true, in: &s)
        }
    }

    public func retrieve(intentId: String) async throws(PaymentGatewayError) -> GatewayIntent {
        try state.withLock { (s: inout State) throws(PaymentGatewayError) -> GatewayIntent in
            if let fault = takeFault(.retrieve, in: &s) { throw fault }
            return try Self.entry(intentId, in: s).intent
        }
    }

    public func capture(
        intentId: String, amountMinor: Int, idempotencyKey: String
    ) async throws(PaymentGatewayError) -> GatewayIntent {
        try idempotent(.capture, key: idempotencyKey, fingerprint: "capture|\(intentId)|\(amountMinor)") {
            s throws(PaymentGatewayError) in
            var intent = try Self.entry(intentId, in: s).intent
            guard intent.status == .requiresCapture else {
                throw .rejected(
                    "This PaymentIntent could not be captured because it has a status of \(intent.status.rawValue). "
                        + "Only a PaymentIntent with one of the following statuses may be captured: requires_capture.")
            }
            guard amountMinor >= 1, amountMinor <= intent.amountCapturable else {
                throw .rejected(
                    "amount_to_capture (\(amountMinor)) must be at least 1 and at most the amount capturable "
                        + "(\(intent.amountCapturable))."
                )
            }
            // The uncaptured rest of the hold is released (final_capture defaults to true).
            intent.status = .succeeded
            intent.amountReceived = amountMinor
            intent.amountCapturable = 0
            self.update(intent, in: &s)
            self.send("payment_intent.succeeded", intent, in: &s)
            return intent
        }
    }

    public func cancel(intentId: String, idempotencyKey: String) async throws(PaymentGatewayError) -> GatewayIntent {
        try idempotent(.cancel, key: idempotencyKey, fingerprint: "cancel|\(intentId)") {
            s throws(PaymentGatewayError) in
            var intent = try Self.entry(intentId, in: s).intent
            let cancellable: Set<GatewayIntentStatus> = [
                .requiresPaymentMethod, .requiresCapture, .requiresConfirmation, .requiresAction, .processing,
            ]
            guard cancellable.contains(intent.status) else {
                throw .rejected(
                    "You cannot cancel this PaymentIntent because it has a status of \(intent.status.rawValue). "
                        + "Only a PaymentIntent with one of the following statuses may be canceled: "
                        + "requires_payment_method, requires_capture, requires_confirmation, requires_action, "
                        + "processing."
                )
            }
            intent.status = .canceled
            intent.amountCapturable = 0
            intent.actionURL = nil
            self.update(intent, in: &s)
            self.send("payment_intent.canceled", intent, in: &s)
            return intent
        }
    }

    // MARK: - The bank's side and tests

    /// The customer answered the bank's challenge: the hold is placed (`requiresCapture`).
    @discardableResult
    public func completeChallenge(intentId: String) throws(PaymentGatewayError) -> GatewayIntent {
        try state.withLock { (s: inout State) throws(PaymentGatewayError) -> GatewayIntent in
            var intent = try Self.awaitingChallenge(intentId, in: s)
            intent.status = .requiresCapture
            intent.amountCapturable = intent.amountMinor
            intent.actionURL = nil
            update(intent, in: &s)
            send("payment_intent.amount_capturable_updated", intent, in: &s)
            return intent
        }
    }

    /// The customer failed (or abandoned) the bank's challenge: nothing is held (`requiresPaymentMethod`, Stripe's
    /// `payment_intent_authentication_failure`).
    @discardableResult
    public func failChallenge(intentId: String) throws(PaymentGatewayError) -> GatewayIntent {
        try state.withLock { (s: inout State) throws(PaymentGatewayError) -> GatewayIntent in
            var intent = try Self.awaitingChallenge(intentId, in: s)
            intent.status = .requiresPaymentMethod
            intent.actionURL = nil
            intent.lastError = GatewayDecline(
                code: "payment_intent_authentication_failure", declineCode: nil,
                message: "The provided PaymentMethod has failed authentication.")
            update(intent, in: &s)
            send("payment_intent.payment_failed", intent, in: &s)
            return intent
        }
    }

    /// The card network let a hold lapse uncaptured (Visa's 5 days, Stripe's 7): the hold is released and the intent
    /// canceled, with `charge.expired` and `payment_intent.canceled` sent.
    @discardableResult
    public func expireHold(intentId: String) throws(PaymentGatewayError) -> GatewayIntent {
        try state.withLock { (s: inout State) throws(PaymentGatewayError) -> GatewayIntent in
            var intent = try Self.entry(intentId, in: s).intent
            guard intent.status == .requiresCapture else {
                throw .rejected("PaymentIntent \(intentId) holds nothing (\(intent.status.rawValue)).")
            }
            intent.status = .canceled
            intent.amountCapturable = 0
            update(intent, in: &s)
            send("charge.expired", intent, in: &s)
            send("payment_intent.canceled", intent, in: &s)
            return intent
        }
    }

    /// The next call of `operation` answers `.ambiguous`, as a timeout or a cut connection would; with `afterApplying`
    /// the call takes effect first (and its answer is saved under its idempotency key), without it nothing happens.
    public func failNext(_ operation: Operation, afterApplying: Bool) {
        state.withLock { $0.faults.append(Fault(operation: operation, afterApplying: afterApplying)) }
    }

    /// Every intent with what it was asked for, oldest first.
    public func entries() -> [Entry] {
        state.withLock { s in s.order.compactMap { s.entries[$0] } }
    }

    /// How many intents the sandbox remembers now.
    public var rememberedIntents: Int { state.withLock { $0.entries.count } }

    /// How many idempotency keys the sandbox remembers now.
    public var rememberedKeys: Int { state.withLock { $0.saved.count } }

    /// Every intent as it stands, oldest first.
    public func intents() -> [GatewayIntent] { entries().map(\.intent) }

    /// The intents still holding money or waiting for a challenge (what a reconciler must not leave behind).
    public func openHolds() -> [GatewayIntent] {
        intents().filter { $0.status == .requiresCapture || $0.status == .requiresAction }
    }

    /// Every event sent so far, oldest first (the same ones `events` delivers).
    public func sentEvents() -> [GatewayEvent] { state.withLock { Array($0.sent.all) } }

    // MARK: - Internals

    /// Runs a mutating call under its idempotency key (see the type's comment), with any injected fault.
    private func idempotent(
        _ operation: Operation, key: String, fingerprint: String,
        _ body: (inout State) throws(PaymentGatewayError) -> GatewayIntent
    ) throws(PaymentGatewayError) -> GatewayIntent {
        try state.withLock { (s: inout State) throws(PaymentGatewayError) -> GatewayIntent in
            guard !key.isEmpty, key.count <= 255 else {
                throw .rejected("An idempotency key of 1 to 255 characters is required.")
            }
            var after = false
            if let index = s.faults.firstIndex(where: { $0.operation == operation }) {
                let fault = s.faults.remove(at: index)
                guard fault.afterApplying else {
                    throw .ambiguous("sandbox: \(operation.rawValue) timed out before reaching the gateway")
                }
                after = true
            }
            let answer: Result<GatewayIntent, PaymentGatewayError>
            if let saved = s.saved[key] {
                guard saved.fingerprint == fingerprint else {
                    throw .rejected(
                        "Keys for idempotent requests can only be used with the same parameters they were first "
                            + "used with. "
                            + "Try using a key other than '\(key)' if you meant to execute a different request.")
                }
                answer = saved.answer
            } else {
                do throws(PaymentGatewayError) {
                    answer = .success(try body(&s))
                } catch {
                    answer = .failure(error)
                }
                if case .failure(.rejected) = answer {
                } else {
                    remember(key, Saved(fingerprint: fingerprint, answer: answer), in: &s)
                }
            }
            if after { throw .ambiguous("sandbox: \(operation.rawValue) took effect but its answer was lost") }
            return try answer.get()
        }
    }

    /// A hold (customer present) or an off-session charge on a test card.
    private func pay(
        _ request: AuthorizationRequest, offSession: Bool, in s: inout State
    ) throws(PaymentGatewayError) -> GatewayIntent {
        guard request.amountMinor >= 1 else {
            throw .rejected("amount must be a positive integer in minor units (got \(request.amountMinor)).")
        }
        guard request.currency.count == 3, request.currency.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw .rejected("Invalid currency: '\(request.currency)'.")
        }
        guard let card = cards[request.paymentMethod] else { throw .rejected(Self.noSuchMethod(request.paymentMethod)) }
        let id = "pi_" + ids.next()
        var intent = GatewayIntent(
            id: id, status: .processing, amountMinor: request.amountMinor, currency: request.currency.lowercased())
        var failure: GatewayDecline?
        switch offSession ? card.offSession : card.hold {
        case .approved where offSession:
            intent.status = .succeeded
            intent.amountReceived = request.amountMinor
        case .approved:
            intent.status = .requiresCapture
            intent.amountCapturable = request.amountMinor
        case .challenge:
            intent.status = .requiresAction
            intent.actionURL = challengeURL(id)
        case .declined(let decline):
            intent.status = .requiresPaymentMethod
            intent.lastError = decline
            failure = decline
        }
        s.entries[id] = Entry(
            intent: intent, paymentMethod: request.paymentMethod, customer: request.customer,
            description: request.description, offSession: offSession, created: now())
        s.order.append(id)
        if intent.isFinal { finished(id, in: &s) }
        switch intent.status {
        case .succeeded: send("payment_intent.succeeded", intent, in: &s)
        case .requiresCapture: send("payment_intent.amount_capturable_updated", intent, in: &s)
        case .requiresPaymentMethod: send("payment_intent.payment_failed", intent, in: &s)
        default: break
        }
        if let failure { throw .declined(failure, intent: intent) }
        return intent
    }

    /// Where challenges are linked from now on: the server's address once it listens (a port chosen at start).
    public func serve(at baseURL: URL) { base.withLock { $0 = baseURL } }

    private func challengeURL(_ intentId: String) -> URL {
        var base = self.base.withLock { $0 }.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return URL(string: base + APIPath.sandboxChallenge(intentId))!
    }

    private func update(_ intent: GatewayIntent, in s: inout State) {
        guard let old = s.entries[intent.id] else { return }
        s.entries[intent.id] = Entry(
            intent: intent, paymentMethod: old.paymentMethod, customer: old.customer,
            description: old.description, offSession: old.offSession, created: old.created)
        if intent.isFinal, !old.intent.isFinal { finished(intent.id, in: &s) }
    }

    /// An intent reached a final state: once more than `retention` have, the oldest of them is forgotten.
    private func finished(_ id: String, in s: inout State) {
        s.finished.append(id)
        while s.finished.count > retention { s.entries[s.finished.removeFirst()] = nil }
        if s.order.count > 2 * s.entries.count + 1024 { s.order.removeAll { s.entries[$0] == nil } }
    }

    /// Saves a key's answer; keys past their lifetime, and the oldest beyond four times `retention`, are forgotten.
    private func remember(_ key: String, _ saved: Saved, in s: inout State) {
        let at = now()
        s.saved[key] = saved
        s.savedOrder.append((key, at))
        while let oldest = s.savedOrder.first,
            s.savedOrder.count > 4 * retention || at.timeIntervalSince(oldest.at) >= Self.idempotencyKeyLifetime
        {
            s.saved[s.savedOrder.removeFirst().key] = nil
        }
    }

    private func send(_ type: String, _ intent: GatewayIntent, in s: inout State) {
        let event = GatewayEvent(id: "evt_" + ids.next(), type: type, intent: intent, created: now())
        s.sent.append(event)
        while s.sent.count > retention { _ = s.sent.removeFirst() }
        continuation.yield(event)
    }

    private func takeFault(_ operation: Operation, in s: inout State) -> PaymentGatewayError? {
        guard let index = s.faults.firstIndex(where: { $0.operation == operation }) else { return nil }
        s.faults.remove(at: index)
        return .ambiguous("sandbox: \(operation.rawValue) timed out")
    }

    private static func entry(_ intentId: String, in s: State) throws(PaymentGatewayError) -> Entry {
        guard let entry = s.entries[intentId] else { throw .rejected("No such payment_intent: '\(intentId)'") }
        return entry
    }

    private static func awaitingChallenge(_ intentId: String, in s: State) throws(PaymentGatewayError) -> GatewayIntent
    {
        let intent = try entry(intentId, in: s).intent
        guard intent.status == .requiresAction else {
            throw .rejected("PaymentIntent \(intentId) is not waiting for a challenge (\(intent.status.rawValue)).")
        }
        return intent
    }

    private static func noSuchMethod(_ token: String) -> String { "No such PaymentMethod: '\(token)'" }

    private static func fingerprint(_ operation: String, _ r: AuthorizationRequest) -> String {
        [operation, String(r.amountMinor), r.currency, r.paymentMethod, r.customer ?? "", r.description].joined(
            separator: "|")
    }
}

extension GatewayIntent {
    /// True once nothing more can happen to the intent in the sandbox: captured or charged, canceled, or declined.
    var isFinal: Bool { status == .succeeded || status == .canceled || status == .requiresPaymentMethod }
}
