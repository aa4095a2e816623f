import HTTPTransport

/// When to try a failed upload or step again, and which failures are worth trying again at all.
public struct SyncBackoff: Sendable, Equatable {
    /// The first pause.
    public var initial: Duration
    /// The longest pause.
    public var maximum: Duration

    /// Pauses of `initial`, doubling up to `maximum`.
    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(60)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The pause after `failures` failures in a row (1 → `initial`), at least what `Retry-After` asked for.
    public func delay(afterFailures failures: Int, error: (any Error)? = nil) -> Duration {
        var delay = initial
        for _ in 1..<max(1, failures) where delay < maximum { delay *= 2 }
        delay = min(delay, maximum)
        if case APIError.retryAfter(let asked, _)? = error { delay = max(delay, asked) }
        return delay
    }

    /// True when sending the same thing again may succeed: transport failures, 5xx, 408, 429 and 401 (a token
    /// may be refreshed). Other 4xx answers will never change, so retrying them would block the queue forever.
    public static func isTransient(_ error: any Error) -> Bool {
        if error is HTTPClientError || error is CancellationError { return true }
        guard let api = error as? APIError else { return true }
        switch api {
        case .retryAfter: return true
        case .undecodable: return true
        case .problem, .status:
            let status = api.status ?? 500
            return status >= 500 || status == 408 || status == 429 || status == 401
        }
    }
}
