import Foundation
public import EnRouteDomain
public import HTTPEngine
import EnRouteCrypto
import EnRouteModels
import Synchronization

/// The `Idempotency-Key` protocol (IETF draft-ietf-httpapi-idempotency-key-header) as one middleware around a route's
/// mutation: replays a stored answer, 409 while the first request is running, 422 for the same key with another body,
/// 400 when the key is required and missing or malformed.
public struct IdempotencyMiddleware: Sendable {
    /// Whether a route refuses requests without a key.
    public enum Mode: Sendable { case required, optional }

    /// What a route's `prepare` step hands back: whose request it is and the mutation to run under the key.
    public typealias Prepared = (
        account: Account, operation: @Sendable (IdempotencyContext?) async throws -> TripRecord
    )

    let service: TripService

    /// A handler that runs `prepare` (authentication and validation: its errors answer at once and
    /// store nothing), then the mutation it returns under the request's key, answering through `render`.
    public func wrap(
        _ mode: Mode, render: @escaping @Sendable (Result<TripRecord, TripError>) -> StoredResponse,
        _ prepare: @escaping @Sendable (HTTPRequest) async throws -> Prepared
    ) -> @Sendable (HTTPRequest) async throws -> HTTPResponse {
        { [service] req in
            let (account, operation) = try await prepare(req)
            return try await Self.run(req, account, mode: mode, service: service, render: render, operation)
        }
    }

    private static func run(
        _ req: HTTPRequest, _ account: Account, mode: Mode, service: TripService,
        render: @escaping @Sendable (Result<TripRecord, TripError>) -> StoredResponse,
        _ operation: (IdempotencyContext?) async throws -> TripRecord
    ) async throws -> HTTPResponse {
        guard let raw = req.headers["Idempotency-Key"] else {
            if mode == .required {
                throw HTTPError(
                    status: 400, title: "Bad Request", detail: "This request needs an Idempotency-Key header (a UUID).")
            }
            do {
                return APIErrors.response(render(.success(try await operation(nil))))
            } catch let error as TripError {
                return APIErrors.response(render(.failure(error)))
            }
        }
        let key = raw.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        guard (8...255).contains(key.count), key.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw HTTPError.badRequest("The Idempotency-Key must be 8 to 255 visible ASCII characters, such as a UUID.")
        }
        let scope = IdempotencyScope(accountId: account.id, method: req.method, path: req.path, key: key.lowercased())
        // The answer stored with the mutation is the one sent: rendered once, not again for the response.
        let rendered = RenderedOnce(render)
        let render = rendered.render
        let context = IdempotencyContext(scope: scope, fingerprint: fingerprint(req.body), render: render)
        switch try await service.claim(context) {
        case .replay(let stored):
            var response = APIErrors.response(stored)
            response.headers.add("Idempotent-Replayed", "true")
            return response
        case .inFlight:
            throw HTTPError(
                status: 409, title: "Conflict",
                detail: "A request with this Idempotency-Key is still being processed; retry shortly.")
        case .mismatch:
            throw HTTPError(
                status: 422, title: "Unprocessable Content",
                detail: "This Idempotency-Key was used with a different request body.")
        case .proceed:
            do {
                return APIErrors.response(render(.success(try await operation(context))))
            } catch let error as TripError {
                switch error {
                case .refused, .alreadyActive:
                    return APIErrors.response(render(.failure(error)))  // stored with the move's transaction
                case .payment(let problem)
                where problem.type == PaymentProblemType.declined || problem.type == PaymentProblemType.actionRequired:
                    return APIErrors.response(render(.failure(error)))  // stored with the attempt the gateway answered
                default:
                    await service.release(context)
                    throw APIErrors.httpError(error) { _ in "" }
                }
            } catch {
                await service.release(context)
                throw error
            }
        }
    }

    /// A route's rendering that remembers its last answer for a trip, so that the same trip is rendered once.
    final class RenderedOnce: Sendable {
        private let base: @Sendable (Result<TripRecord, TripError>) -> StoredResponse
        private let last = Mutex<(trip: TripRecord, response: StoredResponse)?>(nil)

        init(_ base: @escaping @Sendable (Result<TripRecord, TripError>) -> StoredResponse) { self.base = base }

        @Sendable func render(_ result: Result<TripRecord, TripError>) -> StoredResponse {
            guard case .success(let trip) = result else { return base(result) }
            if let hit = last.withLock({ $0 }), hit.trip == trip { return hit.response }
            let response = base(result)
            last.withLock { $0 = (trip, response) }
            return response
        }
    }

    /// The fingerprint an idempotency key remembers of a request body: its SHA-256, hex.
    public static func fingerprint(_ body: [UInt8]) -> String {
        Digest.hex(Digest.sha256(body))
    }
}
