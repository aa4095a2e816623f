public import Foundation

extension SimulationReport {
    /// How often the riders were shown a busy-time price: report.json's `dispatch.surge`. Over the estimates shown
    /// for rides asked for now (a ride booked ahead is never priced with the multiplier), each with the multiplier its
    /// quote was priced under as the server's quote store says (the estimate on the wire carries only its fare).
    /// Without the server's word, or without such an estimate, the count is 0 and the figures null.
    public struct SurgeFigures: Sendable, Equatable, Encodable {
        /// One estimate shown and its multiplier.
        public struct Sample: Sendable, Equatable {
            /// Simulated seconds since the run's start.
            public var second: Double
            public var multiplier: Double
        }
        /// Estimates for rides asked for now whose multiplier is known.
        public var quotes: Int
        /// Share of them priced with a multiplier above 1.
        public var quotedShare: Double?
        /// The largest multiplier among them (1.0 when none was above 1).
        public var max: Double?
        /// Every such estimate in the order shown (not in the JSON: DIR/quotes.csv).
        public var samples: [Sample]

        /// The keys of report.json's `dispatch.surge`.
        public static let keys = ["quotes", "quotedShare", "max"]

        /// The figures of `seen`'s estimates under `quoteDemand`, the server's multiplier by quote id (nil: unknown).
        public init(_ seen: SimulationObservations, quoteDemand: [String: Double]?) {
            samples = seen.estimatesShown.filter { !$0.booked }.compactMap { shown in
                guard let id = shown.quoteId, let multiplier = quoteDemand?[id] else { return nil }
                return Sample(second: shown.second, multiplier: multiplier)
            }
            quotes = samples.count
            let surged = samples.filter { $0.multiplier > 1 }.count
            quotedShare = samples.isEmpty ? nil : Double(surged) / Double(samples.count)
            max = samples.isEmpty ? nil : Swift.max(1, samples.map(\.multiplier).max() ?? 1)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(quotes, forKey: .quotes)
            try c.encode(quotedShare, forKey: .quotedShare)
            try c.encode(max, forKey: .max)
        }
        enum CodingKeys: String, CodingKey { case quotes, quotedShare, max }
    }

    /// The row of the busy-time prices; none when no multiplier is known.
    func surgeRows() -> [(String, String)] {
        let surge = dispatch.surge
        guard surge.quotes > 0 else { return [] }
        let largest = surge.max.map { String(format: "×%.1f", $0) } ?? "–"
        return [
            (
                "ride estimates priced above ×1 · largest multiplier",
                "\(Self.percent(surge.quotedShare)) of \(surge.quotes) · \(largest)"
            )
        ]
    }

    /// One row per estimate shown for a ride asked for now whose multiplier is known: the simulated second it was
    /// shown at and its multiplier. For seeing when the busy-time price switched on and off.
    public func quotesCSV() -> String {
        let rows = dispatch.surge.samples.map { String(format: "%.0f,%.1f", $0.second, $0.multiplier) }
        return (["second,multiplier"] + rows).joined(separator: "\n") + "\n"
    }
}
