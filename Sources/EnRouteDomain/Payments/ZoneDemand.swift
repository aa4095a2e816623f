public import EnRouteModels

/// Open requests and idle providers per zone of a `HexGrid`, sampled every minute and smoothed over several, so that a
/// price follows a zone's level of demand rather than the requests of the last few seconds.
///
/// Each sample moves a zone's figures by `weight` of the way to its new counts (an exponential average: with 0.3 the
/// last five minutes carry over 80 % of the weight). A zone whose figures fall under 0.01 is forgotten.
public struct ZoneDemand: Sendable, Equatable {
    /// A zone's smoothed counts.
    public struct Figures: Sendable, Equatable, Codable {
        /// Requests waiting for a provider whose pickup is in the zone.
        public var open: Double
        /// Online providers with no trip in the zone.
        public var idle: Double
        public init(open: Double, idle: Double) { self.open = open; self.idle = idle }
    }

    public let grid: HexGrid
    /// The newest sample's share of the smoothed figures, in (0, 1].
    public let weight: Double
    /// Samples taken so far.
    public private(set) var samples = 0
    public private(set) var zones: [HexCell: Figures] = [:]

    /// No zone counted yet; `weight` is clamped to (0, 1].
    public init(grid: HexGrid = HexGrid(), weight: Double = 0.3) {
        self.grid = grid
        self.weight = weight.isFinite ? min(1, max(0.01, weight)) : 0.3
    }

    /// One sample: the pickups of the requests waiting now and the positions of the idle providers.
    public mutating func record(open pickups: [Coordinate], idle positions: [Coordinate]) {
        var counts: [HexCell: Figures] = [:]
        for point in pickups { counts[grid.cell(of: point), default: Figures(open: 0, idle: 0)].open += 1 }
        for point in positions { counts[grid.cell(of: point), default: Figures(open: 0, idle: 0)].idle += 1 }
        let first = samples == 0
        samples += 1
        for cell in Set(zones.keys).union(counts.keys) {
            let now = counts[cell] ?? Figures(open: 0, idle: 0)
            let before = zones[cell] ?? Figures(open: 0, idle: 0)
            // The first sample is taken as it is: nothing earlier to smooth with.
            let w = first ? 1 : weight
            let next = Figures(
                open: before.open + (now.open - before.open) * w, idle: before.idle + (now.idle - before.idle) * w)
            zones[cell] = next.open < 0.01 && next.idle < 0.01 ? nil : next
        }
    }

    /// The zone holding `point` and its smoothed figures (zero where nothing was counted).
    public func figures(at point: Coordinate) -> (zone: HexCell, figures: Figures) {
        let cell = grid.cell(of: point)
        return (cell, zones[cell] ?? Figures(open: 0, idle: 0))
    }
}
