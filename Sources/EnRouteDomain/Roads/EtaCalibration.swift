public import Foundation
import Synchronization

/// One completed leg: what the road route predicted when the leg started and how long it really took.
public struct EtaLegSample: Sendable, Equatable, Codable {
    /// The trip the leg belonged to.
    public var tripId: String
    /// `toPickup` or `toDropoff`.
    public var leg: String
    /// The leg's road class ("all" when the router does not say).
    public var roadClass: String
    /// The hour of the week the leg started in (0 = Monday 00:00–01:00, local to the service's offset).
    public var hourOfWeek: Int
    /// Seconds the route predicted at the leg's start.
    public var predictedSeconds: Double
    /// Seconds the leg took.
    public var actualSeconds: Double
    /// When the leg ended.
    public var recordedAt: Date

    /// A sample.
    public init(
        tripId: String, leg: String, roadClass: String, hourOfWeek: Int, predictedSeconds: Double,
        actualSeconds: Double,
        recordedAt: Date
    ) {
        self.tripId = tripId; self.leg = leg; self.roadClass = roadClass; self.hourOfWeek = hourOfWeek
        self.predictedSeconds = predictedSeconds; self.actualSeconds = actualSeconds; self.recordedAt = recordedAt
    }

    /// actual ÷ predicted.
    public var ratio: Double { actualSeconds / predictedSeconds }
}

/// Where completed legs are kept (SQLite in production, memory in tests).
public protocol EtaSampleStore: Sendable {
    /// Keeps `sample`.
    func append(_ sample: EtaLegSample) async throws
    /// The newest `limit` samples, oldest first.
    func recent(limit: Int) throws -> [EtaLegSample]
}

/// Samples in memory, gone with the process.
public final class InMemoryEtaSampleStore: EtaSampleStore {
    private let samples = Mutex<[EtaLegSample]>([])
    /// An empty store.
    public init() {}
    public func append(_ sample: EtaLegSample) async throws { samples.withLock { $0.append(sample) } }
    public func recent(limit: Int) throws -> [EtaLegSample] { samples.withLock { Array($0.suffix(max(0, limit))) } }
}

/// How wide an arrival window is around a route's remaining time: earliest = `low` × remaining + `lowExtra`,
/// latest = `high` × remaining + `highExtra`.
public struct EtaBand: Sendable, Equatable {
    public var low: Double
    public var high: Double
    public var lowExtra: TimeInterval
    public var highExtra: TimeInterval
    /// Which history decided it: "class+hour", "class", "hour", "all" or "default".
    public var source: String

    /// A band.
    public init(low: Double, high: Double, lowExtra: TimeInterval = 0, highExtra: TimeInterval = 0, source: String) {
        self.low = low; self.high = high; self.lowExtra = lowExtra; self.highExtra = highExtra; self.source = source
    }

    /// Before enough history: 0.85 × remaining to 1.25 × remaining + 2 min (the straight-line estimator's band).
    public static let `default` = EtaBand(low: 0.85, high: 1.25, lowExtra: 0, highExtra: 120, source: "default")
}

/// The calibrated error model: the central `coverage` of actual ÷ predicted travel time on completed legs (by default
/// 80 %: the 10th to the 90th percentile), by road class and hour of the week, falling back to coarser buckets (class
/// alone, hour alone, everything) and then to `EtaBand.default` while a bucket has fewer than `minimumSamples`.
public struct EtaCalibration: Sendable {
    /// Samples a bucket needs before its percentiles are used.
    public let minimumSamples: Int
    /// The share of past legs a band holds (0.8: from the 10th to the 90th percentile).
    public let coverage: Double
    /// The band used before any bucket has enough history.
    public let fallback: EtaBand
    private var ratios: [String: [Double]] = [:]

    /// The model over `samples` (legs with a non-positive prediction or time are ignored).
    public init(
        samples: [EtaLegSample] = [], minimumSamples: Int = 20, coverage: Double = 0.8, fallback: EtaBand = .default
    ) {
        self.minimumSamples = max(1, minimumSamples); self.fallback = fallback
        self.coverage = min(max(coverage, 0), 1)
        for sample in samples { add(sample) }
    }

    /// Takes in one more completed leg.
    public mutating func add(_ sample: EtaLegSample) {
        guard sample.predictedSeconds > 0, sample.actualSeconds > 0, sample.ratio.isFinite else { return }
        for key in Self.keys(roadClass: sample.roadClass, hourOfWeek: sample.hourOfWeek) {
            ratios[key.key, default: []].append(sample.ratio)
        }
    }

    /// The band for a leg of `roadClass` starting in `hourOfWeek`: the finest bucket with enough history.
    public func band(roadClass: String = "all", hourOfWeek: Int) -> EtaBand {
        for (key, source) in Self.keys(roadClass: roadClass, hourOfWeek: hourOfWeek) {
            guard let values = ratios[key], values.count >= minimumSamples else { continue }
            let sorted = values.sorted()
            let tail = (1 - coverage) / 2
            return EtaBand(low: Self.percentile(sorted, tail), high: Self.percentile(sorted, 1 - tail), source: source)
        }
        return fallback
    }

    /// Samples seen in the bucket of everything.
    public var sampleCount: Int { ratios["*|*"]?.count ?? 0 }

    /// The `p` quantile of ascending `sorted` values, interpolated between closest ranks.
    public static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = p * Double(sorted.count - 1)
        let lo = Int(rank.rounded(.down)), hi = min(sorted.count - 1, lo + 1)
        return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - Double(lo))
    }

    /// The hour of the week `date` falls in on the clocks of `timeZone` (its offset at that date, summer time
    /// included), 0 = Monday 00:00.
    public static func hourOfWeek(_ date: Date, in timeZone: TimeZone = TimeZone(identifier: "UTC")!) -> Int {
        let offset = timeZone.secondsFromGMT(for: date)
        let hours = Int(((date.timeIntervalSince1970 + Double(offset)) / 3600).rounded(.down))
        // 1970-01-01 was a Thursday: Monday 00:00 was 72 hours before.
        return ((hours + 72) % 168 + 168) % 168
    }

    private static func keys(roadClass: String, hourOfWeek: Int) -> [(key: String, source: String)] {
        var out: [(String, String)] = []
        if roadClass != "all" {
            out.append(("\(roadClass)|\(hourOfWeek)", "class+hour"))
            out.append(("\(roadClass)|*", "class"))
        }
        out.append(("*|\(hourOfWeek)", "hour"))
        out.append(("*|*", "all"))
        return out
    }
}
