public import Foundation

extension SimulationReport {
    /// How many orders dispatch stacked on a courier already carrying one, from the couriers' accepted offers and the
    /// customers' tracking: report.json's `dispatch.stacked`. Without an order assigned the counts are 0 and the
    /// figures null; without a stacked order, the figures over stacked orders are null.
    public struct StackedFigures: Sendable, Equatable, Encodable {
        /// Delivery orders of the run that a courier was assigned.
        public var ordersAssigned: Int
        /// Of those, the orders whose courier took them through a stacked offer (one with `stops`).
        public var count: Int
        /// `count` / `ordersAssigned`.
        public var share: Double?
        /// The 90th percentile, over the stacked offers accepted, of the minutes the offer said it adds to the
        /// hand-over of the order already carried (`addedSeconds` / 60): planned by dispatch's road table, not
        /// measured on the road.
        public var extraMinutesP90: Double?
        /// Orders delivered in the run that rode on a stack: taken through a stacked offer, or carried when one was.
        public var deliveredOnStacks: Int
        /// Of those whose customer's tracking showed one or more stops before theirs, the share whose tracking later
        /// showed none before the hand-over.
        public var stopsBeforeFellToZeroShare: Double?
        /// Of `deliveredOnStacks`, the orders whose customer's tracking never showed a stop before theirs (the route
        /// handed them over first, or the tracking's polls never caught one).
        public var neverShowedStopsBefore: Int

        /// The keys of report.json's `dispatch.stacked`.
        public static let keys = [
            "ordersAssigned", "count", "share", "extraMinutesP90", "deliveredOnStacks", "stopsBeforeFellToZeroShare",
            "neverShowedStopsBefore",
        ]

        /// The figures of `seen`'s orders (`orderIDs`), their assignments and stacked offers.
        public init(_ seen: SimulationObservations) {
            let assigned = Set(seen.orderIDs).filter { seen.assignments[$0] != nil }
            let stacked = assigned.filter { seen.stackedOffers[$0] != nil }
            ordersAssigned = assigned.count
            count = stacked.count
            share = assigned.isEmpty ? nil : Double(stacked.count) / Double(assigned.count)
            let minutes = stacked.compactMap { seen.stackedOffers[$0]?.addedSeconds }.map { Double($0) / 60 }
            extraMinutesP90 = SimulationReport.percentile(minutes, 90)
            let carried = stacked.flatMap { seen.stackedOffers[$0]?.carried ?? [] }
            let delivered = Set(seen.paidTripIDs).intersection(stacked.union(carried)).intersection(assigned)
            deliveredOnStacks = delivered.count
            let shown = delivered.map { seen.stopsBeforeSeen[$0] ?? [] }
            let withAStop = shown.filter { $0.contains { $0 >= 1 } }
            let fell = withAStop.filter(Self.fellToZero).count
            stopsBeforeFellToZeroShare = withAStop.isEmpty ? nil : Double(fell) / Double(withAStop.count)
            neverShowedStopsBefore = shown.count - withAStop.count
        }

        /// True when `values` hold one or more stops before, and a later 0.
        static func fellToZero(_ values: [Int]) -> Bool {
            guard let first = values.firstIndex(where: { $0 >= 1 }) else { return false }
            return values[first...].contains(0)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(ordersAssigned, forKey: .ordersAssigned)
            try c.encode(count, forKey: .count)
            try c.encode(share, forKey: .share)
            try c.encode(extraMinutesP90, forKey: .extraMinutesP90)
            try c.encode(deliveredOnStacks, forKey: .deliveredOnStacks)
            try c.encode(stopsBeforeFellToZeroShare, forKey: .stopsBeforeFellToZeroShare)
            try c.encode(neverShowedStopsBefore, forKey: .neverShowedStopsBefore)
        }
        enum CodingKeys: String, CodingKey {
            case ordersAssigned, count, share, extraMinutesP90, deliveredOnStacks, stopsBeforeFellToZeroShare
            case neverShowedStopsBefore
        }
    }

    /// The rows of the stacked orders; none when no order was assigned.
    func stackedRows() -> [(String, String)] {
        let stacked = dispatch.stacked
        guard stacked.ordersAssigned > 0 else { return [] }
        let minutes = stacked.extraMinutesP90.map { String(format: "%.1f min", $0) } ?? "–"
        return [
            (
                "orders stacked · added to the carried order p90 (planned)",
                "\(stacked.count) of \(stacked.ordersAssigned) assigned (\(Self.percent(stacked.share))) · \(minutes)"
            ),
            (
                "stacked, delivered: stops before fell to 0 · never showed one",
                "\(Self.percent(stacked.stopsBeforeFellToZeroShare)) · \(stacked.neverShowedStopsBefore) of "
                    + "\(stacked.deliveredOnStacks)"
            ),
        ]
    }
}
