import Foundation
public import EnRouteDomain
public import EnRouteModels
public import HTTPEngine

/// Error mapping in one place: the domain's `TripError` as problem+json, and stored answers as responses.
public enum APIErrors {
    /// The HTTP error for a trip error; a 409 carries the real trip in the audience's wire shape.
    public static func httpError<T: Codable & Sendable & Equatable>(
        _ error: TripError, _ view: (TripRecord) -> T
    ) -> HTTPError {
        switch error {
        case .notFound:
            return .notFound("No such trip.")
        case .forbidden(let detail):
            return .forbidden(detail)
        case .invalid(let pointer, let detail):
            return .invalid(pointer, detail)
        case .refused(let refusal, let trip):
            var e = HTTPError(status: 409, title: "Conflict", detail: refusal.reason)
            e.body = (try? WireCoding.encoder().encode(ConflictProblem(detail: refusal.reason, trip: view(trip)))).map(
                Array.init)
            e.headers.set("Content-Type", "application/problem+json")
            return e
        case .alreadyActive(let trip):
            let detail = "You already have an active trip; finish or cancel it first."
            var e = HTTPError(status: 409, title: "Conflict", detail: detail)
            e.body =
                (try? WireCoding.encoder().encode(
                    ConflictProblem(
                        detail: detail, trip: view(trip), type: "https://enroute.invalid/problems/already-active")))
                .map(Array.init)
            return e
        case .contended:
            return .unavailable(retryAfterSeconds: 1, detail: "The trip is being changed by other requests; try again.")
        case .quoteExpired(let fresh):
            let detail = "The quote ran out; here is a fresh one for the same request. Confirm it to go ahead."
            var e = HTTPError(status: 409, title: "Quote expired", detail: detail)
            switch fresh {
            case .ride(let estimate):
                e.body = (try? WireCoding.encoder().encode(QuoteExpiredProblem(detail: detail, quote: estimate))).map(
                    Array.init)
            case .order(let quote):
                e.body = (try? WireCoding.encoder().encode(QuoteExpiredProblem(detail: detail, quote: quote))).map(
                    Array.init)
            }
            e.headers.set("Content-Type", "application/problem+json")
            return e
        case .payment(let problem):
            var e = HTTPError(status: problem.status, title: problem.title, detail: problem.detail)
            e.body = (try? WireCoding.encoder().encode(problem)).map(Array.init)
            e.headers.set("Content-Type", "application/problem+json")
            return e
        }
    }

    /// `body`'s value, its `TripError` mapped with the party-neutral snapshot (or `view`).
    static func map<T>(_ wire: WireMapping, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as TripError { throw httpError(error) { wire.snapshot($0) } }
    }

    /// `body`'s value, its `TripError` mapped with `view` (the snapshot by default).
    static func mapAsync<T>(
        _ wire: WireMapping, _ body: () async throws -> T, refused view: ((TripRecord) -> TripSnapshot)? = nil
    ) async throws -> T {
        do { return try await body() } catch let error as TripError {
            throw httpError(error) { (view ?? wire.snapshot)($0) }
        }
    }

    /// A stored JSON answer.
    static func stored(status: Int, json: some Encodable) -> StoredResponse {
        StoredResponse(
            status: status, contentType: "application/json",
            body: (try? WireCoding.encoder().encode(json)).map(Array.init) ?? [])
    }

    /// A stored problem answer.
    static func stored(_ error: HTTPError) -> StoredResponse {
        let response = error.response
        return StoredResponse(
            status: response.status, contentType: response.headers["Content-Type"] ?? "application/problem+json",
            body: response.bodyBytes)
    }

    /// The response for a stored answer; never cached by intermediaries.
    static func response(_ stored: StoredResponse) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", stored.contentType)
        headers.add("Cache-Control", "no-store")
        return HTTPResponse(status: stored.status, headers: headers, body: .bytes(stored.body))
    }
}

/// Provider locations that cannot be reached (Redis) are a 503 the client retries, not a 500.
extension ProviderLocationsUnavailable: HTTPErrorConvertible {
    public var httpError: HTTPError {
        .unavailable(retryAfterSeconds: 1, detail: "Provider presence is unavailable; try again shortly.")
    }
}

/// A database that cannot be reached is a 503 the client retries, not a 500.
extension StoreUnavailable: HTTPErrorConvertible {
    public var httpError: HTTPError {
        .unavailable(retryAfterSeconds: 1, detail: "The database is unavailable; try again shortly.")
    }
}
