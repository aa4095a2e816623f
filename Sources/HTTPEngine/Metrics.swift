import Foundation
import Synchronization

/// Counters, gauges and latency histograms, rendered in the Prometheus text format.
public final class MetricsRegistry: Sendable {
    private struct Histogram {
        var buckets: [Int]
        var count = 0
        var sum = 0.0

        mutating func record(_ seconds: Double, bucket: Int?) {
            if let bucket { buckets[bucket] += 1 }
            count += 1
            sum += seconds
        }
    }

    private struct RouteKey: Hashable {
        let route: String
        let method: String
    }

    private struct State {
        var requests: [RouteKey: (statuses: [Int: Int], latency: Histogram)] = [:]
        var help: [String: (type: String, text: String)] = [:]
        var counters: [String: [String: Double]] = [:]
        var histograms: [String: [String: Histogram]] = [:]
        var gauges: [String: @Sendable () -> Double] = [:]
    }

    /// Upper bounds of the latency buckets, in seconds.
    public static let latencyBuckets: [Double] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
    ]

    private let state = Mutex(State())

    public init() {}

    /// Counts one answered request and its latency: the engine's hot path, so no label strings are built here.
    public func recordRequest(route: String, method: String, status: Int, seconds: Double) {
        let key = RouteKey(route: route, method: method)
        let bucket = Self.latencyBuckets.firstIndex(where: { seconds <= $0 })
        state.withLock { s in
            // In place, with one look-up: a copy of the entry out of the table would copy its dictionary and buckets.
            Self.count(
                status: status, seconds: seconds, bucket: bucket,
                in: &s.requests[
                    key, default: ([:], Histogram(buckets: Array(repeating: 0, count: Self.latencyBuckets.count)))])
        }
    }

    private static func count(
        status: Int, seconds: Double, bucket: Int?, in entry: inout (statuses: [Int: Int], latency: Histogram)
    ) {
        entry.statuses[status, default: 0] += 1
        entry.latency.record(seconds, bucket: bucket)
    }

    /// Adds `value` to a counter with the given labels.
    public func increment(_ name: String, labels: [String: String] = [:], by value: Double = 1, help: String = "") {
        let key = Self.labelText(labels)
        state.withLock { s in
            if s.help[name] == nil { s.help[name] = ("counter", help) }
            s.counters[name, default: [:]][key, default: 0] += value
        }
    }

    /// Records one observation in a latency histogram.
    public func observe(_ name: String, seconds: Double, labels: [String: String] = [:], help: String = "") {
        let key = Self.labelText(labels)
        state.withLock { s in
            if s.help[name] == nil { s.help[name] = ("histogram", help) }
            var h =
                s.histograms[name]?[key] ?? Histogram(buckets: Array(repeating: 0, count: Self.latencyBuckets.count))
            if let i = Self.latencyBuckets.firstIndex(where: { seconds <= $0 }) { h.buckets[i] += 1 }
            h.count += 1
            h.sum += seconds
            s.histograms[name, default: [:]][key] = h
        }
    }

    /// Registers a gauge read when metrics are rendered.
    public func gauge(_ name: String, help: String = "", _ read: @escaping @Sendable () -> Double) {
        state.withLock { s in
            s.help[name] = ("gauge", help)
            s.gauges[name] = read
        }
    }

    /// The current value of a counter (for tests and readiness checks).
    public func counter(_ name: String, labels: [String: String] = [:]) -> Double {
        state.withLock { $0.counters[name]?[Self.labelText(labels)] ?? 0 }
    }

    /// Everything in the Prometheus text exposition format (version 0.0.4).
    public func render() -> String {
        var snapshot = state.withLock { $0 }
        // Fold the request fast path into ordinary counter and histogram series.
        if !snapshot.requests.isEmpty {
            snapshot.help["enroute_http_requests_total"] = (
                "counter", "HTTP requests answered, by route, method and status."
            )
            snapshot.help["enroute_http_request_duration_seconds"] = (
                "histogram", "Time from request start to the answer being queued."
            )
            for (key, entry) in snapshot.requests {
                for (status, count) in entry.statuses {
                    let labels = Self.labelText(["route": key.route, "method": key.method, "status": String(status)])
                    snapshot.counters["enroute_http_requests_total", default: [:]][labels] = Double(count)
                }
                snapshot.histograms["enroute_http_request_duration_seconds", default: [:]][
                    Self.labelText(["route": key.route, "method": key.method])] = entry.latency
            }
        }
        var out = ""
        for name in snapshot.help.keys.sorted() {
            let (type, text) = snapshot.help[name]!
            if !text.isEmpty { out += "# HELP \(name) \(text)\n" }
            out += "# TYPE \(name) \(type)\n"
            switch type {
            case "counter":
                for (labels, value) in (snapshot.counters[name] ?? [:]).sorted(by: { $0.key < $1.key }) {
                    out += "\(name)\(labels.isEmpty ? "" : "{\(labels)}") \(Self.number(value))\n"
                }
            case "gauge":
                if let read = snapshot.gauges[name] { out += "\(name) \(Self.number(read()))\n" }
            default:
                for (labels, h) in (snapshot.histograms[name] ?? [:]).sorted(by: { $0.key < $1.key }) {
                    let prefix = labels.isEmpty ? "" : labels + ","
                    var cumulative = 0
                    for (i, bound) in Self.latencyBuckets.enumerated() {
                        cumulative += h.buckets[i]
                        out += "\(name)_bucket{\(prefix)le=\"\(bound)\"} \(cumulative)\n"
                    }
                    out += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(h.count)\n"
                    out += "\(name)_sum\(labels.isEmpty ? "" : "{\(labels)}") \(h.sum)\n"
                    out += "\(name)_count\(labels.isEmpty ? "" : "{\(labels)}") \(h.count)\n"
                }
            }
        }
        return out
    }

    private static func labelText(_ labels: [String: String]) -> String {
        labels.sorted { $0.key < $1.key }.map { key, value in
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
                of: "\"", with: "\\\""
            ).replacingOccurrences(of: "\n", with: "\\n")
            return "\(key)=\"\(escaped)\""
        }.joined(separator: ",")
    }

    private static func number(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }
}
