import Foundation
import EnRouteDomain

/// Retrieve before retry: an ambiguous answer means the call may or may not have happened, and a retry under the
/// same key may only replay a saved error (Stripe saves 500s too). So before each retry the gateway asks Stripe
/// what is true now: the intent itself for a call on an intent, a search by the `metadata[enroute_key]` for a create
/// (which has no id yet). Only when that shows the call did not take effect does it send the call again.
extension StripeGateway {
    /// A GET, retried after ambiguous answers (reads move no money).
    func read(_ path: String, query: String? = nil) async throws(PaymentGatewayError) -> Data {
        var attempt = 0
        while true {
            do {
                return try await send("GET", path, query: query)
            } catch {
                guard error.isAmbiguous, attempt < retry.retries else { throw error.error }
                attempt += 1
                try await pause(before: attempt, after: error.error)
            }
        }
    }

    /// Creates a PaymentIntent under `key`. After an ambiguous answer it searches for an intent tagged with the key
    /// and returns that one; only if there is none does it send the create again, under the same key (so Stripe
    /// itself refuses to make a second). Without a definite answer after the retries, it stays `.ambiguous`.
    func create(_ form: StripeForm, key: String) async throws(PaymentGatewayError) -> GatewayIntent {
        let what = "POST /v1/payment_intents"
        var attempt = 0
        var last: PaymentGatewayError
        do {
            return try outcome(
                try decodeIntent(try await send("POST", "/v1/payment_intents", form: form, key: key), what))
        } catch {
            guard error.isAmbiguous, retry.retries > 0 else { throw error.error }
            last = error.error
        }
        while attempt < retry.retries {
            attempt += 1
            try await pause(before: attempt, after: last)
            do {
                if let found = try await search(key: key) { return try outcome(found) }
            } catch {
                guard error.isAmbiguous else { throw error.error }
                last = error.error
                continue
            }
            do {
                return try outcome(
                    try decodeIntent(try await send("POST", "/v1/payment_intents", form: form, key: key), what))
            } catch {
                // A replayed 5xx under the key is not the truth either: the next round searches again.
                guard error.isAmbiguous else { throw error.error }
                last = error.error
            }
        }
        throw Self.unsettled(last, attempts: attempt + 1)
    }

    /// A capture or cancel on an intent. After an ambiguous answer it retrieves the intent: `done` says the change
    /// is there, and that intent is the answer; otherwise the change is sent again. When Stripe has saved an error
    /// under the key (a replay), the retry goes under a key of its own: the intent showed the change did not happen,
    /// and its state machine refuses a second capture or cancel, so no money can move twice.
    func change(
        _ id: String, _ operation: String, _ form: StripeForm, key: String,
        done: (GatewayIntent) -> Bool
    ) async throws(PaymentGatewayError) -> GatewayIntent {
        let path = Self.intentPath(id) + "/" + operation
        var sentKey = key
        var attempt = 0
        while true {
            var last: PaymentGatewayError
            var replayed: Bool
            do {
                return try decodeIntent(try await send("POST", path, form: form, key: sentKey), "POST \(path)")
            } catch {
                guard error.isAmbiguous, attempt < retry.retries else {
                    throw attempt > 0 && error.isAmbiguous
                        ? Self.unsettled(error.error, attempts: attempt + 1) : error.error
                }
                last = error.error
                replayed = error.replayed
            }
            var known = false
            while !known && attempt < retry.retries {
                attempt += 1
                try await pause(before: attempt, after: last)
                do {
                    let now = try decodeIntent(try await send("GET", Self.intentPath(id)), "GET \(Self.intentPath(id))")
                    if done(now) { return now }
                    known = true
                } catch {
                    guard error.isAmbiguous else { throw error.error }
                    last = error.error
                }
            }
            guard known else { throw Self.unsettled(last, attempts: attempt + 1) }
            if replayed { sentKey = "\(key)/retry-\(attempt)" }
        }
    }

    /// The intent tagged with `key` at creation, if Stripe has one.
    func search(key: String) async throws(Failure) -> GatewayIntent? {
        let escaped = key.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
        let query = "query=" + StripeForm.escape("metadata['enroute_key']:'\(escaped)'", keepBrackets: false)
        let body = try await send("GET", "/v1/payment_intents/search", query: query)
        guard let page = try? JSONDecoder().decode(StripeWire.SearchResult.self, from: body) else {
            throw Failure(
                error: .ambiguous(
                    "Stripe answered GET /v1/payment_intents/search with a body that is not a search result"))
        }
        guard let first = page.data.first else { return nil }
        guard let intent = first.intent else {
            throw Failure(
                error: .ambiguous(
                    "Stripe's search found \(first.id) in status \(first.status), which EnRoute does not know"))
        }
        return intent
    }

    /// A created intent as the seam's answer: one left waiting for a new method after a refusal is that refusal.
    func outcome(_ intent: GatewayIntent) throws(Failure) -> GatewayIntent {
        if intent.status == .requiresPaymentMethod, let refusal = intent.lastError {
            throw Failure(error: .declined(refusal, intent: intent))
        }
        return intent
    }

    /// Waits before retry `attempt`; a cancelled wait ends the retries with the last ambiguous answer.
    func pause(before attempt: Int, after last: PaymentGatewayError) async throws(PaymentGatewayError) {
        do { try await retry.sleep(retry.delay(before: attempt)) } catch { throw last }
    }

    /// The last ambiguous answer, saying the retries did not settle it.
    static func unsettled(_ last: PaymentGatewayError, attempts: Int) -> PaymentGatewayError {
        guard case .ambiguous(let detail) = last else { return last }
        return .ambiguous("\(detail) (still unknown after \(attempts) attempts)")
    }
}
