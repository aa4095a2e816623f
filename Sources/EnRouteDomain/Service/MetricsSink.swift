/// Where the domain counts what happened; the server's Prometheus registry is one, `NoMetrics` another.
public protocol MetricsSink: Sendable {
    /// Adds `value` to the counter `name` with `labels`; `help` describes the counter once.
    func increment(_ name: String, labels: [String: String], by value: Double, help: String)
}

extension MetricsSink {
    /// Adds one (or `value`) to the counter `name`.
    public func increment(_ name: String, labels: [String: String] = [:], by value: Double = 1, help: String = "") {
        increment(name, labels: labels, by: value, help: help)
    }
}

/// Counts nothing: for tools and tests that do not read metrics.
public struct NoMetrics: MetricsSink {
    public init() {}
    public func increment(_ name: String, labels: [String: String], by value: Double, help: String) {}
}
