import Foundation

/// Percentiles of a sample (nearest rank), and a monotonic clock in seconds.
struct Percentiles {
    let sorted: [Double]

    init(_ samples: [Double]) { sorted = samples.sorted() }

    /// The `p`-th percentile (0...100); 0 for an empty sample.
    func callAsFunction(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(sorted.count - 1, max(0, rank))]
    }

    /// Seconds on CLOCK_MONOTONIC, comparable across threads.
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// A small deterministic generator (SplitMix64), so every run places the same providers.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
