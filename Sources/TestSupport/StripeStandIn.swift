public import Foundation
public import HTTPTransport
import EnRouteCrypto
import HTTPEngine
import Synchronization

/// A stateful stand-in for the part of Stripe's API EnRoute uses, on a real loopback socket: PaymentIntents with manual
/// or automatic capture, confirm, capture (partial captures release the rest), cancel, search by metadata,
/// PaymentMethod retrieval, Stripe's documented test payment methods, 402 card errors shaped like Stripe's, idempotency
/// keys as Stripe's API describes them, Bearer auth, and injected faults.
///
/// Test payment methods: `pm_card_visa` and `pm_card_mastercard` succeed; `pm_card_visa_chargeDeclined` is
/// `card_declined`/`generic_decline`; `pm_card_visa_chargeDeclinedInsufficientFunds` is `insufficient_funds`;
/// `pm_card_authenticationRequired` asks for a challenge on session (answered at `challengeURL`) and declines with
/// `authentication_required` off session; `pm_card_chargeCustomerFail` holds on session and declines off session.
public final class StripeStandIn: Sendable {
    /// The secret key requests must carry (`Authorization: Bearer …`); anything else is 401.
    public let apiKey: String
    /// Where the stand-in listens, e.g. `http://127.0.0.1:53124`.
    public let baseURL: URL
    let server: HTTPServer
    let book: StripeBook

    /// Starts a stand-in on a free loopback port; `now` dates the intents and events it makes.
    public init(
        apiKey: String = "sk_test_enroute_standin",
        now: @escaping @Sendable () -> Date = { Date(timeIntervalSince1970: 1_800_000_000) }
    ) throws {
        let book = StripeBook(apiKey: apiKey, now: now)
        var config = HTTPServerConfiguration()
        config.port = 0
        config.threads = 2
        let server = HTTPServer(router: book.router(), configuration: config)
        try server.start()
        let base = URL(string: "http://127.0.0.1:\(server.port)")!
        book.state.withLock { $0.baseURL = base }
        self.apiKey = apiKey; self.baseURL = base; self.server = server; self.book = book
    }

    /// Stops listening.
    public func shutdown() async { await server.shutdown() }

    /// The next `count` API requests answer `status` with Stripe's `api_error` body. With `afterApplying` the request
    /// takes effect first (a create creates, a capture captures) and only its answer is lost. A 5xx is saved under the
    /// request's Idempotency-Key and replayed to retries, as Stripe does; a 429 is not saved.
    public func failNext(_ count: Int = 1, status: Int = 500, afterApplying: Bool = false) {
        book.state.withLock {
            $0.faults += Array(repeating: StripeFault(status: status, afterApplying: afterApplying), count: count)
        }
    }

    /// Calls `hook` after each API request took effect and before its answer is sent (a test kills a client there, so
    /// the effect happens and the answer is lost with the process); nil removes it.
    public func onApplied(_ hook: (@Sendable (StandInRequest) -> Void)?) {
        book.applied.withLock { $0 = hook.map { StripeBook.Hook(call: $0) } }
    }

    /// Every PaymentIntent, oldest first.
    public var intents: [StandInIntent] { book.state.withLock { s in s.order.compactMap { s.intents[$0]?.snapshot } } }

    /// One PaymentIntent by id.
    public func intent(_ id: String) -> StandInIntent? { book.state.withLock { $0.intents[id]?.snapshot } }

    /// Every API request received, in order.
    public var requests: [StandInRequest] { book.state.withLock { $0.requests } }

    /// The page that answers an intent's bank challenge: GET it (`?result=fail` to fail it).
    public func challengeURL(for intentId: String) -> URL { baseURL.appending(path: "standin/challenges/\(intentId)") }

    /// An event as Stripe would deliver it: `type` over the intent's current state.
    public func eventPayload(type: String, intentId: String, eventId: String) -> [UInt8]? {
        book.state.withLock { s in
            guard let intent = s.intents[intentId] else { return nil }
            let created = Int(s.now().timeIntervalSince1970)
            return Array(
                (#"{"id":"\#(eventId)","object":"event","api_version":"2024-06-20","created":\#(created),"#
                    + #""livemode":false,"type":"\#(type)","data":{"object":"#).utf8)
                + intent.json + Array("}}".utf8)
        }
    }

    /// The `Stripe-Signature` value for `payload` under `secret` at `timestamp`, computed here independently of
    /// EnRoute's verifier.
    public static func signature(payload: [UInt8], secret: String, timestamp: Int) -> String {
        let mac = Digest.hmacSHA256(key: Array(secret.utf8), message: Array("\(timestamp).".utf8) + payload)
        return "t=\(timestamp),v1=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    /// POSTs the event `type` for an intent to a webhook endpoint, signed with `secret` at `timestamp`, through
    /// `client`.
    public func deliver(
        type: String, intentId: String, eventId: String, to url: URL, secret: String, timestamp: Int,
        client: any HTTPClient
    ) async throws -> HTTPClientResponse {
        guard let payload = eventPayload(type: type, intentId: intentId, eventId: eventId) else {
            throw HTTPClientError.network("the stand-in has no intent \(intentId)")
        }
        return try await client.send(
            HTTPClientRequest(
                method: "POST", url: url,
                headers: [
                    "Content-Type": "application/json; charset=utf-8",
                    "Stripe-Signature": Self.signature(payload: payload, secret: secret, timestamp: timestamp),
                ], body: Data(payload)))
    }
}

/// A PaymentIntent as the stand-in holds it.
public struct StandInIntent: Sendable, Equatable {
    public let id: String
    public let status: String
    public let amount: Int
    public let amountCapturable: Int
    public let amountReceived: Int
    public let captureMethod: String
    public let paymentMethod: String?
    public let metadata: [String: String]
}

/// One API request as the stand-in received it.
public struct StandInRequest: Sendable, Equatable {
    public let method: String
    public let path: String
    /// Header names lower-cased.
    public let headers: [String: String]
    /// The form body's fields, decoded.
    public let form: [String: String]
    public let query: [String: String]
}

struct StripeFault: Sendable { let status: Int; let afterApplying: Bool }

/// An answer, and whether Stripe would save it under an Idempotency-Key (not for failed parameter validation).
struct StripeAnswer {
    var status: Int
    var body: [UInt8]
    var saved = true
}

struct StripeCard { let brand: String; let last4: String }

let stripeTestCards: [String: StripeCard] = [
    "pm_card_visa": StripeCard(brand: "visa", last4: "4242"),
    "pm_card_mastercard": StripeCard(brand: "mastercard", last4: "4444"),
    "pm_card_visa_chargeDeclined": StripeCard(brand: "visa", last4: "0002"),
    "pm_card_visa_chargeDeclinedInsufficientFunds": StripeCard(brand: "visa", last4: "9995"),
    "pm_card_authenticationRequired": StripeCard(brand: "visa", last4: "3184"),
    "pm_card_chargeCustomerFail": StripeCard(brand: "visa", last4: "0341"),
]

/// A card error: Stripe's `code`, `decline_code` and message.
struct StripeCardError {
    let code: String, declineCode: String?, message: String
    static let generic = StripeCardError(
        code: "card_declined", declineCode: "generic_decline", message: "Your card was declined.")
    static let insufficientFunds = StripeCardError(
        code: "card_declined", declineCode: "insufficient_funds", message: "Your card has insufficient funds.")
    static let authenticationRequired = StripeCardError(
        code: "authentication_required", declineCode: "authentication_required",
        message: "Your card was declined. This transaction requires authentication.")
    static let authenticationFailed = StripeCardError(
        code: "payment_intent_authentication_failure", declineCode: nil,
        message:
            "We are unable to authenticate your payment method. Please choose a different payment method and try again."
    )
    var json: [UInt8] {
        Array(
            (#"{"type":"card_error","code":\#(jsonString(code)),"#
                + #""decline_code":\#(declineCode.map(jsonString) ?? "null"),"message":\#(jsonString(message))"#).utf8)
    }
}

struct StripeIntent {
    let id: String
    let amount: Int
    let currency: String
    let captureMethod: String
    let created: Int
    var status: String
    var paymentMethod: String?
    var customer: String?
    var description: String?
    var metadata: [String: String]
    var amountCapturable = 0
    var amountReceived = 0
    var lastError: StripeCardError?
    var nextActionURL: String?
    var cancellationReason: String?

    var snapshot: StandInIntent {
        StandInIntent(
            id: id, status: status, amount: amount, amountCapturable: amountCapturable, amountReceived: amountReceived,
            captureMethod: captureMethod, paymentMethod: paymentMethod, metadata: metadata)
    }

    var json: [UInt8] {
        let meta = metadata.sorted { $0.key < $1.key }.map { "\(jsonString($0.key)):\(jsonString($0.value))" }.joined(
            separator: ",")
        let next =
            nextActionURL.map {
                #"{"type":"redirect_to_url","redirect_to_url":{"url":\#(jsonString($0)),"return_url":null}}"#
            } ?? "null"
        let error = lastError.map { String(decoding: $0.json, as: UTF8.self) + "}" } ?? "null"
        return Array(
            ("{"
                + [
                    #""id":\#(jsonString(id))"#, #""object":"payment_intent""#, #""amount":\#(amount)"#,
                    #""amount_capturable":\#(amountCapturable)"#, #""amount_received":\#(amountReceived)"#,
                    #""cancellation_reason":\#(cancellationReason.map(jsonString) ?? "null")"#,
                    #""capture_method":\#(jsonString(captureMethod))"#,
                    #""created":\#(created)"#, #""currency":\#(jsonString(currency))"#,
                    #""customer":\#(customer.map(jsonString) ?? "null")"#,
                    #""description":\#(description.map(jsonString) ?? "null")"#, #""last_payment_error":\#(error)"#,
                    #""livemode":false"#,
                    #""metadata":{\#(meta)}"#, #""next_action":\#(next)"#,
                    #""payment_method":\#(paymentMethod.map(jsonString) ?? "null")"#,
                    #""payment_method_types":["card"]"#, #""status":\#(jsonString(status))"#,
                ].joined(separator: ",") + "}").utf8)
    }
}

struct StripeSaved { let fingerprint: String; let answer: StripeAnswer }

struct StripeState {
    var baseURL = URL(string: "http://127.0.0.1")!
    let now: @Sendable () -> Date
    var intents: [String: StripeIntent] = [:]
    var order: [String] = []
    var saved: [String: StripeSaved] = [:]
    var faults: [StripeFault] = []
    var requests: [StandInRequest] = []
    var serial = 0
}

final class StripeBook: Sendable {
    let apiKey: String
    let state: Mutex<StripeState>
    /// Behind a struct: a bare closure in a `Mutex` is re-wrapped in reabstraction thunks on every `withLock`.
    struct Hook: Sendable { let call: @Sendable (StandInRequest) -> Void }
    let applied = Mutex<Hook?>(nil)

    init(apiKey: String, now: @escaping @Sendable () -> Date) {
        self.apiKey = apiKey
        self.state = Mutex(StripeState(now: now))
    }

    /// Every handler is synchronous: it answers from memory on the engine's thread, so a busy cooperative pool
    /// (two threads on the test machine) cannot delay the stand-in's answers into the client's timeout.
    func router() -> Router {
        var router = Router()
        router.add(
            "GET", "/v1/payment_methods/{id}",
            .sync { [self] in api($0) { s, r, _ in Self.paymentMethod(r.pathParameters["id"] ?? "") } })
        router.add("POST", "/v1/payment_intents", .sync { [self] in api($0) { s, _, form in Self.create(&s, form) } })
        router.add(
            "GET", "/v1/payment_intents/search",
            .sync { [self] in api($0) { s, r, _ in Self.search(s, r.query["query"] ?? "") } })
        router.add(
            "GET", "/v1/payment_intents/{id}",
            .sync { [self] in api($0) { s, r, _ in Self.onIntent(&s, r) { intent in Self.ok(intent) } } })
        router.add(
            "POST", "/v1/payment_intents/{id}/confirm",
            .sync { [self] in
                api($0) { s, r, form in
                    let base = s.baseURL
                    return Self.onIntent(&s, r) { Self.confirm(&$0, form, base) }
                }
            })
        router.add(
            "POST", "/v1/payment_intents/{id}/capture",
            .sync { [self] in api($0) { s, r, form in Self.onIntent(&s, r) { Self.capture(&$0, form) } } })
        router.add(
            "POST", "/v1/payment_intents/{id}/cancel",
            .sync { [self] in api($0) { s, r, form in Self.onIntent(&s, r) { Self.cancel(&$0, form) } } })
        router.add(
            "GET", "/standin/challenges/{id}",
            .sync { [self] request in
                state.withLock { s in
                    Self.answerChallenge(
                        &s, request.pathParameters["id"] ?? "", passed: request.query["result"] != "fail")
                }
            })
        return router
    }

    /// Auth, the request log, idempotency and faults around one operation, all under the lock (one request at a time).
    func api(
        _ request: HTTPRequest, _ operation: (inout StripeState, HTTPRequest, [String: String]) -> StripeAnswer
    ) -> HTTPResponse {
        let response = answer(request, operation)
        if let hook = applied.withLock({ $0 }), let last = state.withLock({ $0.requests.last }) { hook.call(last) }
        return response
    }

    func answer(
        _ request: HTTPRequest, _ operation: (inout StripeState, HTTPRequest, [String: String]) -> StripeAnswer
    ) -> HTTPResponse {
        state.withLock { s in
            s.serial += 1
            let form = Self.parseForm(request.body)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.lowercased()] = field.value }
            s.requests.append(
                StandInRequest(
                    method: request.method, path: request.path, headers: headers, form: form, query: request.query))
            guard request.headers["Authorization"] == "Bearer \(apiKey)" else {
                let shown =
                    request.headers["Authorization"].map { String($0.dropFirst("Bearer ".count).suffix(4)) } ?? ""
                return Self.respond(
                    Self.error(
                        401, type: "invalid_request_error", code: nil,
                        message: "Invalid API Key provided: ****\(shown)"), serial: s.serial)
            }
            // Stripe ignores Idempotency-Key on GET and DELETE.
            let key = request.method == "POST" ? request.headers["Idempotency-Key"] : nil
            let fingerprint =
                request.method + " " + request.path + "?"
                + form.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
            if let key, let saved = s.saved[key] {
                guard saved.fingerprint == fingerprint else {
                    return Self.respond(
                        Self.error(
                            400, type: "idempotency_error", code: nil,
                            message:
                                "Keys for idempotent requests can only be used with the same parameters they were "
                                + "first used with. Try using a key other than '\(key)' if you meant to execute a "
                                + "different request.",
                            saved: false), serial: s.serial)
                }
                return Self.respond(saved.answer, serial: s.serial, replayed: true)
            }
            var answer: StripeAnswer
            if !s.faults.isEmpty {
                let fault = s.faults.removeFirst()
                if fault.afterApplying { _ = operation(&s, request, form) }
                answer = Self.error(
                    fault.status, type: "api_error", code: nil,
                    message: "An error occurred with our API (injected by the stand-in).",
                    saved: fault.status >= 500)
            } else {
                answer = operation(&s, request, form)
            }
            if let key, answer.saved { s.saved[key] = StripeSaved(fingerprint: fingerprint, answer: answer) }
            return Self.respond(answer, serial: s.serial)
        }
    }

    static func respond(_ answer: StripeAnswer, serial: Int, replayed: Bool = false) -> HTTPResponse {
        var response = HTTPResponse.jsonBytes(answer.body, status: answer.status)
        response.headers.add("Request-Id", "req_standin_\(serial)")
        if replayed { response.headers.add("Idempotent-Replayed", "true") }
        return response
    }

    static func ok(_ intent: StripeIntent) -> StripeAnswer { StripeAnswer(status: 200, body: intent.json) }

    static func error(
        _ status: Int, type: String, code: String?, message: String, param: String? = nil, saved: Bool = true
    ) -> StripeAnswer {
        let body =
            #"{"error":{"type":\#(jsonString(type)),"code":\#(code.map(jsonString) ?? "null"),"#
            + #""message":\#(jsonString(message)),"param":\#(param.map(jsonString) ?? "null")}}"#
        return StripeAnswer(status: status, body: Array(body.utf8), saved: saved)
    }

    /// A parameter that fails validation: 400, never saved under the key.
    static func invalid(_ message: String, param: String, code: String = "parameter_invalid") -> StripeAnswer {
        error(400, type: "invalid_request_error", code: code, message: message, param: param, saved: false)
    }

    static func card(_ intent: StripeIntent, _ refusal: StripeCardError) -> StripeAnswer {
        let body =
            #"{"error":"#.utf8 + refusal.json + Array(#","payment_intent":"#.utf8) + intent.json + Array("}}".utf8)
        return StripeAnswer(status: 402, body: Array(body))
    }

    static func paymentMethod(_ id: String) -> StripeAnswer {
        guard let card = stripeTestCards[id] else {
            return error(
                404, type: "invalid_request_error", code: "resource_missing", message: "No such PaymentMethod: '\(id)'",
                param: "payment_method", saved: false)
        }
        return StripeAnswer(
            status: 200,
            body: Array(
                (#"{"id":\#(jsonString(id)),"object":"payment_method","type":"card","livemode":false,"#
                    + #""card":{"brand":"\#(card.brand)","last4":"\#(card.last4)","exp_month":12,"exp_year":2034,"#
                    + #""funding":"credit","country":"US"}}"#).utf8))
    }

    /// Supports the one query form EnRoute sends: `metadata['key']:'value'` (backslash escapes quotes).
    static func search(_ s: StripeState, _ query: String) -> StripeAnswer {
        guard let (key, value) = parseMetadataQuery(query) else {
            return invalid("The stand-in supports only metadata['key']:'value' queries, not \(query)", param: "query")
        }
        let found = s.order.compactMap { s.intents[$0] }.filter { $0.metadata[key] == value }
        let data = found.map { String(decoding: $0.json, as: UTF8.self) }.joined(separator: ",")
        return StripeAnswer(
            status: 200,
            body: Array(
                (#"{"object":"search_result","data":[\#(data)],"has_more":false,"next_page":null,"#
                    + #""url":"/v1/payment_intents/search"}"#).utf8))
    }

    static func parseMetadataQuery(_ query: String) -> (String, String)? {
        var rest = Substring(query)
        guard rest.hasPrefix("metadata['") else { return nil }
        rest = rest.dropFirst("metadata['".count)
        guard let close = rest.range(of: "']:'") else { return nil }
        let key = String(rest[..<close.lowerBound])
        rest = rest[close.upperBound...]
        var value = "", escaped = false
        for character in rest {
            if escaped { value.append(character); escaped = false; continue }
            if character == "\\" { escaped = true; continue }
            if character == "'" { return (key, value) }
            value.append(character)
        }
        return nil
    }

    static func parseForm(_ body: [UInt8]) -> [String: String] {
        var form: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
            }
            form[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return form
    }
}

private func jsonString(_ text: String) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .withoutEscapingSlashes
    return String(decoding: (try? encoder.encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
}
