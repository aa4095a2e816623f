public import EnRouteModels
public import Foundation

/// A point found by a grid search, with its straight-line distance from the query in metres.
public struct GeoHit<ID: Hashable & Sendable>: Sendable {
    public let id: ID
    public let coordinate: Coordinate
    /// When the position was recorded (for freshness checks).
    public let recordedAt: Date
    public let distance: Double

    /// A hit on `id` at `coordinate`, `distance` metres from the query.
    public init(id: ID, coordinate: Coordinate, recordedAt: Date, distance: Double) {
        self.id = id
        self.coordinate = coordinate
        self.recordedAt = recordedAt
        self.distance = distance
    }
}

/// A geospatial index over points in fixed-size latitude/longitude cells.
///
/// Nearest-neighbour queries search rings of cells outwards from the query's cell and stop as soon as
/// no unsearched cell can hold a closer point, so a query touches a handful of cells however many
/// points the index holds. Not thread-safe: its owner serialises access.
public struct GeoGrid<ID: Hashable & Sendable>: Sendable {
    struct Entry: Sendable {
        let id: ID
        var coordinate: Coordinate
        var recordedAt: Date
    }

    /// Cell height and width in degrees.
    public let cellDegrees: Double
    private var cells: [Int64: [Entry]] = [:]
    private var slots: [ID: (cell: Int64, index: Int)] = [:]

    /// An empty grid; 0.01° cells are about 1.1 km tall.
    public init(cellDegrees: Double = 0.01) { self.cellDegrees = cellDegrees }

    /// How many points the grid holds.
    public var count: Int { slots.count }

    /// True when `id` has a point in the grid.
    public func contains(_ id: ID) -> Bool { slots[id] != nil }

    /// Puts `id` at `coordinate`, moving it if it was elsewhere.
    public mutating func upsert(_ id: ID, at coordinate: Coordinate, recordedAt: Date) {
        let cell = key(coordinate)
        if let slot = slots[id] {
            if slot.cell == cell {
                cells[cell]![slot.index].coordinate = coordinate
                cells[cell]![slot.index].recordedAt = recordedAt
                return
            }
            remove(id)
        }
        cells[cell, default: []].append(Entry(id: id, coordinate: coordinate, recordedAt: recordedAt))
        slots[id] = (cell, cells[cell]!.count - 1)
    }

    /// Takes `id` out of the grid.
    public mutating func remove(_ id: ID) {
        guard let slot = slots.removeValue(forKey: id) else { return }
        var entries = cells.removeValue(forKey: slot.cell)!
        let last = entries.count - 1
        if slot.index != last {
            entries[slot.index] = entries[last]
            slots[entries[slot.index].id] = (slot.cell, slot.index)
        }
        entries.removeLast()
        if !entries.isEmpty { cells[slot.cell] = entries }
    }

    /// Removes every point recorded before `cutoff`; returns the ids removed.
    @discardableResult
    public mutating func removeAll(recordedBefore cutoff: Date) -> [ID] {
        var stale: [ID] = []
        for entries in cells.values { for entry in entries where entry.recordedAt < cutoff { stale.append(entry.id) } }
        for id in stale { remove(id) }
        return stale
    }

    /// Up to `limit` points within `radius` metres of `center`, nearest first, among those `include` accepts.
    public func nearest(
        to center: Coordinate, limit: Int, within radius: Double,
        where include: (ID, Date) -> Bool = { _, _ in true }
    ) -> [GeoHit<ID>] {
        guard limit > 0, !cells.isEmpty else { return [] }
        let metresPerDegree = 111_195.0
        let cosLat = max(0.01, cos(center.lat * .pi / 180))
        let cellHeight = cellDegrees * metresPerDegree, cellWidth = cellDegrees * metresPerDegree * cosLat
        let step = min(cellHeight, cellWidth)
        let row = Int64((center.lat / cellDegrees).rounded(.down)),
            col = Int64((center.lng / cellDegrees).rounded(.down))
        // Rings beyond the radius cannot hold a hit; 2,000 rings bound the search near the poles.
        let maxRing = min(2_000, Int64((radius / step).rounded(.up)) + 1)
        var best: [GeoHit<ID>] = []
        best.reserveCapacity(limit + 1)
        var ring: Int64 = 0
        while ring <= maxRing {
            // Every point in ring r is at least (r - 1) cells away along some axis.
            let floor = Double(max(0, ring - 1)) * step
            if floor > radius || (best.count == limit && floor > best[limit - 1].distance) { break }
            forEachCell(inRing: ring, row: row, col: col) { cell in
                guard let entries = cells[cell] else { return }
                for entry in entries {
                    let dy = (entry.coordinate.lat - center.lat) * metresPerDegree
                    let dx = (entry.coordinate.lng - center.lng) * metresPerDegree * cosLat
                    let d = (dx * dx + dy * dy).squareRoot()
                    guard d <= radius, best.count < limit || d < best[best.count - 1].distance,
                        include(entry.id, entry.recordedAt)
                    else { continue }
                    let hit = GeoHit(
                        id: entry.id, coordinate: entry.coordinate, recordedAt: entry.recordedAt, distance: d)
                    let at = best.firstIndex { $0.distance > d } ?? best.count
                    best.insert(hit, at: at)
                    if best.count > limit { best.removeLast() }
                }
            }
            ring += 1
        }
        return best
    }

    private func forEachCell(inRing ring: Int64, row: Int64, col: Int64, _ body: (Int64) -> Void) {
        if ring == 0 { body(Self.pack(row, col)); return }
        for c in (col - ring)...(col + ring) {
            body(Self.pack(row - ring, c))
            body(Self.pack(row + ring, c))
        }
        for r in (row - ring + 1)...(row + ring - 1) {
            body(Self.pack(r, col - ring))
            body(Self.pack(r, col + ring))
        }
    }

    private func key(_ c: Coordinate) -> Int64 {
        Self.pack(Int64((c.lat / cellDegrees).rounded(.down)), Int64((c.lng / cellDegrees).rounded(.down)))
    }

    private static func pack(_ row: Int64, _ col: Int64) -> Int64 { (row << 32) | (col & 0xFFFF_FFFF) }
}
