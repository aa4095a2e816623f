public import EnRouteDomain
public import HTTPEngine
import Synchronization

/// Per-account rate limits by route class, shared by every request: one `RateLimitPolicy` per class
/// behind its own lock, read against an injected clock.
public final class RateLimiter: Sendable {
    /// The limits in force.
    public let limits: RateLimits
    private let lanes: [RateLimitClass: Lane]
    private let now: @Sendable () -> Duration

    private final class Lane: Sendable {
        let policy: Mutex<RateLimitPolicy>
        init(_ policy: RateLimitPolicy) { self.policy = Mutex(policy) }
    }

    /// A limiter enforcing `limits`, reading time from `clock`.
    public convenience init<C: Clock>(_ limits: RateLimits, clock: C) where C.Duration == Duration {
        let origin = clock.now
        self.init(limits, now: { origin.duration(to: clock.now) })
    }

    /// A limiter enforcing `limits`; `now` is the time elapsed on a monotonic clock.
    public init(_ limits: RateLimits, now: @escaping @Sendable () -> Duration) {
        self.limits = limits
        self.now = now
        lanes = limits.limits.mapValues { Lane(RateLimitPolicy($0)) }
    }

    /// Takes one request of `kind` from `account`; nil when `kind` is not limited.
    public func admit(_ kind: RateLimitClass, account: String) -> RateLimitDecision? {
        guard let lane = lanes[kind] else { return nil }
        let at = now()
        return lane.policy.withLock { $0.admit(account, at: at) }
    }

    /// Accounts holding state for `kind` now (for tests of the memory bound).
    public func trackedAccounts(_ kind: RateLimitClass) -> Int {
        lanes[kind]?.policy.withLock { $0.trackedAccounts } ?? 0
    }

    /// `handler` under `kind`'s limit for the account `account` names: 429 problem+json with `Retry-After`
    /// when the bucket is empty, and the `RateLimit-*` fields on every answer, success or error.
    /// A request `account` cannot name (no valid token) goes straight to `handler`, which refuses it.
    public func limiting(
        _ kind: RateLimitClass, account: @escaping @Sendable (HTTPRequest) -> String?,
        _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse
    )
        -> @Sendable (HTTPRequest) async throws -> HTTPResponse
    {
        guard lanes[kind] != nil else { return handler }
        return { [self] request in
            guard let id = account(request), let decision = admit(kind, account: id) else {
                return try await handler(request)
            }
            guard decision.allowed else { throw Self.tooManyRequests(kind, decision) }
            do {
                var response = try await handler(request)
                for field in decision.headers { response.headers.set(field.name, field.value) }
                return response
            } catch var error as HTTPError {
                for field in decision.headers { error.headers.set(field.name, field.value) }
                throw error
            }
        }
    }

    /// The problem type of a 429.
    public static let problemType = "https://enroute.invalid/problems/rate-limited"

    /// 429 Too Many Requests naming the class, its limit and when to retry, with the header fields.
    static func tooManyRequests(_ kind: RateLimitClass, _ decision: RateLimitDecision) -> HTTPError {
        let retry = decision.retryAfterSeconds ?? 1
        var error = HTTPError(
            status: 429, title: "Too Many Requests",
            detail:
                "Too many \(kind.rawValue) requests from this account: at most \(decision.rate.limit) per "
                + "\(decision.rate.periodSeconds) s. Retry in \(retry) s.",
            type: problemType)
        for field in decision.headers { error.headers.set(field.name, field.value) }
        return error
    }
}
