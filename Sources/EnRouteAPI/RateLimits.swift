public import EnRouteDomain
import Foundation

/// The kinds of request that share one allowance per account.
public enum RateLimitClass: String, CaseIterable, Sendable, Comparable {
    /// `POST /v1/trips`, `POST /v1/orders`.
    case creates
    /// Steps, accepts and declines, cancels, availability, merchant accept and ready, ops problem reports.
    case steps
    /// `POST /v1/provider/locations`.
    case locations
    /// `POST /v1/estimates`.
    case estimates

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One class's allowance: `limit` requests per `period`, all of which may come at once.
public struct RateLimit: Sendable, Equatable, CustomStringConvertible {
    public var limit: Int
    public var period: Duration

    /// `limit` requests per `period`; both must be positive.
    public init(_ limit: Int, per period: Duration) {
        precondition(limit > 0 && period > .zero, "a rate limit needs a positive count and period")
        self.limit = limit; self.period = period
    }

    /// The period in whole seconds (at least 1), as `RateLimit-Policy`'s `w` names it.
    public var periodSeconds: Int { max(1, Int(period.components.seconds)) }

    public var description: String { "\(limit)/\(periodSeconds)s" }
}

/// The rate limits of every class; a class without one is not limited.
public struct RateLimits: Sendable, Equatable, CustomStringConvertible {
    public var limits: [RateLimitClass: RateLimit]

    public init(_ limits: [RateLimitClass: RateLimit]) { self.limits = limits }

    /// Limits a real app never reaches in normal use.
    public static let standard = RateLimits([
        .creates: RateLimit(10, per: .seconds(60)),
        .steps: RateLimit(120, per: .seconds(60)),
        .locations: RateLimit(600, per: .seconds(60)),
        .estimates: RateLimit(60, per: .seconds(60)),
    ])

    /// Nothing is limited.
    public static let off = RateLimits([:])

    public subscript(_ kind: RateLimitClass) -> RateLimit? {
        get { limits[kind] }
        set { limits[kind] = newValue }
    }

    public var description: String {
        limits.isEmpty
            ? "off" : limits.sorted { $0.key < $1.key }.map { "\($0.key.rawValue)=\($0.value)" }.joined(separator: ",")
    }

    /// A malformed `--rate-limits` value, with what was expected.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// Parses `off`, or comma-separated `class=N/PERIOD` or `class=off` entries (PERIOD as `60s`, `1m`, `m`,
    /// `1h`) over the standard limits: `creates=5/60s,estimates=off`.
    public static func parse(_ text: String) throws(ParseError) -> RateLimits {
        let text = text.trimmingCharacters(in: .whitespaces)
        if text == "off" { return .off }
        let classes = RateLimitClass.allCases.map(\.rawValue).joined(separator: ", ")
        var result = RateLimits.standard
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard !entry.allSatisfy(\.isWhitespace) else {
                throw ParseError(
                    description: "'\(text)' has an empty entry; give class=N/PERIOD entries separated by commas, or off"
                )
            }
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            guard parts.count == 2 else {
                throw ParseError(description: "'\(entry)' is not class=N/PERIOD (e.g. creates=10/60s), or off")
            }
            guard let kind = RateLimitClass(rawValue: name) else {
                throw ParseError(description: "'\(name)' is not a rate limit class; the classes are \(classes)")
            }
            let value = parts[1].trimmingCharacters(in: .whitespaces)
            if value == "off" { result[kind] = nil; continue }
            let rate = value.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard rate.count == 2, let limit = Int(rate[0]), limit > 0, let period = Self.period(rate[1]) else {
                throw ParseError(
                    description:
                        "'\(entry)' is not \(name)=N/PERIOD with N and PERIOD positive (e.g. \(name)=10/60s, 10/1m, "
                        + "10/m), or \(name)=off"
                )
            }
            result[kind] = RateLimit(limit, per: period)
        }
        return result
    }

    /// `60s`, `2m`, `1h`, or a bare unit meaning one of it; nil when malformed or not positive.
    static func period(_ text: Substring) -> Duration? {
        guard let unit = text.last, let seconds = ["s": 1, "m": 60, "h": 3600][unit] else { return nil }
        let count = text.dropLast()
        guard let n = count.isEmpty ? 1 : Int(count), n > 0, n <= 7 * 24 * 3600 else { return nil }
        return .seconds(n * seconds)
    }
}
