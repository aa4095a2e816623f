/// One class's rate limit over every account: a token bucket of `limit` requests refilled evenly over
/// `period`, kept as GCRA's theoretical arrival time per account, so it is one number per account.
///
/// Pure: the time arrives with each call. An account whose bucket has refilled completely holds no
/// state (a full bucket and no bucket answer alike), and such accounts are swept out whenever the table
/// has doubled since the last sweep, so memory follows the accounts active within one period.
struct RateLimitPolicy: Sendable {
    let rate: RateLimit
    /// Time between two requests at the steady rate, in nanoseconds.
    private let interval: Int64
    /// How far ahead of now an account's arrival time may run: the whole bucket.
    private let tolerance: Int64
    private let minimumSweep: Int
    /// Per account, when its bucket will be full again (nanoseconds on the caller's clock).
    private var fullAt: [String: Int64] = [:]
    private var sweepAt: Int

    /// A policy for `rate`; the table is swept no sooner than when it holds `minimumSweep` accounts.
    init(_ rate: RateLimit, minimumSweep: Int = 1024) {
        self.rate = rate
        interval = max(1, Self.nanoseconds(rate.period) / Int64(rate.limit))
        tolerance = interval * Int64(rate.limit)
        self.minimumSweep = minimumSweep
        sweepAt = minimumSweep
    }

    /// Accounts holding state now (their buckets are not full, or not swept yet).
    var trackedAccounts: Int { fullAt.count }

    /// Takes one request from `account`'s bucket at `now`, or refuses it when the bucket is empty.
    mutating func admit(_ account: String, at now: Duration) -> RateLimitDecision {
        let now = Self.nanoseconds(now)
        let full = max(fullAt[account] ?? now, now)
        let next = full + interval
        guard next - now <= tolerance else {
            return RateLimitDecision(
                allowed: false, rate: rate, remaining: 0, resetSeconds: Self.seconds(full - now),
                retryAfterSeconds: max(1, Self.seconds(next - now - tolerance)))
        }
        fullAt[account] = next
        if fullAt.count >= sweepAt { sweep(now) }
        return RateLimitDecision(
            allowed: true, rate: rate, remaining: Int((tolerance - (next - now)) / interval),
            resetSeconds: Self.seconds(next - now), retryAfterSeconds: nil)
    }

    /// Drops the accounts whose buckets are full by `now`; the next sweep waits until the table doubles.
    private mutating func sweep(_ now: Int64) {
        fullAt = fullAt.filter { $0.value > now }
        sweepAt = max(minimumSweep, fullAt.count * 2)
    }

    static func nanoseconds(_ d: Duration) -> Int64 {
        let (s, atto) = d.components
        return s * 1_000_000_000 + atto / 1_000_000_000
    }

    /// Whole seconds, rounded up.
    static func seconds(_ nanoseconds: Int64) -> Int { Int((max(0, nanoseconds) + 999_999_999) / 1_000_000_000) }
}

/// The answer to one request under a rate limit, and the header fields that tell the client.
public struct RateLimitDecision: Sendable, Equatable {
    public let allowed: Bool
    public let rate: RateLimit
    /// Requests the account may still send at once.
    public let remaining: Int
    /// Seconds until the whole allowance is back.
    public let resetSeconds: Int
    /// When refused, seconds until one request would pass.
    public let retryAfterSeconds: Int?

    /// `RateLimit-Limit`, `-Remaining`, `-Reset` and `-Policy` (IETF httpapi RateLimit header draft,
    /// revisions 03 to 06), and `Retry-After` when refused.
    public var headers: [(name: String, value: String)] {
        var fields = [
            ("RateLimit-Limit", String(rate.limit)), ("RateLimit-Remaining", String(remaining)),
            ("RateLimit-Reset", String(resetSeconds)), ("RateLimit-Policy", "\(rate.limit);w=\(rate.periodSeconds)"),
        ]
        if let retryAfterSeconds { fields.append(("Retry-After", String(retryAfterSeconds))) }
        return fields
    }
}
