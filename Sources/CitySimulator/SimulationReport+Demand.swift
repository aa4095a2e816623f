public import Foundation

extension SimulationReport {
    /// The demand the run was asked for: report.json's `demand`, the base rates and the rush hour (null when steady).
    public struct DemandFigures: Sendable, Equatable, Encodable {
        /// The rates outside the rush hour.
        public var ridesPerMinute: Double
        public var ordersPerMinute: Double
        public var profile: DemandProfile

        /// The keys of report.json's `demand`, and of its `rushHour`.
        public static let keys = ["ridesPerMinute", "ordersPerMinute", "rushHour"]
        public static let rushHourKeys = ["fromSeconds", "toSeconds", "factor"]

        public init(ridesPerMinute: Double, ordersPerMinute: Double, profile: DemandProfile = .steady) {
            self.ridesPerMinute = ridesPerMinute; self.ordersPerMinute = ordersPerMinute; self.profile = profile
        }

        /// `2 rides and 1 order a minute, steady` or `…, ×4 from minute 10 to 25`.
        public var text: String {
            let base = String(format: "%g rides and %g orders a minute", ridesPerMinute, ordersPerMinute)
            guard let rush = profile.rushHour else { return base + ", steady" }
            return base
                + String(
                    format: ", ×%g from minute %g to %g", rush.factor, rush.fromSecond / 60, rush.toSecond / 60)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(ridesPerMinute, forKey: .ridesPerMinute)
            try c.encode(ordersPerMinute, forKey: .ordersPerMinute)
            if let rush = profile.rushHour {
                var r = c.nestedContainer(keyedBy: RushCodingKeys.self, forKey: .rushHour)
                try r.encode(rush.fromSecond, forKey: .fromSeconds)
                try r.encode(rush.toSecond, forKey: .toSeconds)
                try r.encode(rush.factor, forKey: .factor)
            } else {
                try c.encodeNil(forKey: .rushHour)
            }
        }
        enum CodingKeys: String, CodingKey { case ridesPerMinute, ordersPerMinute, rushHour }
        enum RushCodingKeys: String, CodingKey { case fromSeconds, toSeconds, factor }
    }
}
