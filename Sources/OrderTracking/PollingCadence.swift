import HTTPTransport

/// The polling engine's pure timing rules: cadence by stage, backoff on errors, Retry-After.
public struct PollingCadence: Sendable {
    /// Between polls while placed, picking or with a problem.
    public var slow: Duration = .seconds(15)
    /// Between polls while on the way or arriving: the rider reports every 5 s, so faster gains nothing.
    public var fast: Duration = .seconds(5)
    /// Waits after 1, 2, 3… failures in a row; the last one repeats.
    public var backoff: [Duration] = [.seconds(5), .seconds(10), .seconds(20), .seconds(30)]

    public init() {}

    /// The wait before the next poll; nil once the order is terminal.
    public func interval(for status: OrderStatus?) -> Duration? {
        switch status {
        case .onTheWay, .arriving: fast
        case .placed, .picking, .problem, nil: slow
        case .delivered, .cancelled: nil
        }
    }

    /// The wait after `failures` failures in a row, never shorter than a Retry-After the server sent.
    public func delay(afterFailures failures: Int, error: any Error) -> Duration {
        let step = backoff[min(max(failures, 1), backoff.count) - 1]
        if case APIError.retryAfter(let wait, _) = error { return max(step, wait) }
        return step
    }

    /// The wait after `failures` failures polling an order in `status`: the backoff, never shorter than the stage's
    /// own interval (a failure while picking does not bring the next poll forward from 15 s to 5 s).
    public func delay(afterFailures failures: Int, error: any Error, during status: OrderStatus?) -> Duration {
        max(delay(afterFailures: failures, error: error), interval(for: status) ?? .zero)
    }
}
