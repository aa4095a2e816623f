public import Foundation
public import EnRouteModels
import Synchronization

/// Who is online and where: each provider's latest kept position, kept in memory with an expiry, and a grid over the
/// positions of online providers.
///
/// An online provider is findable only while their latest position is fresh (`fixLifetime`); one who
/// goes offline, or whose position expires, is found by neither dispatch nor the nearby map.
///
/// Positions are partitioned by city: each findable provider sits in the grid of the city holding their position, a
/// search looks only in the city holding its centre, and a provider outside every city is not findable.
public final class ProviderPresence: Sendable {
    /// A provider's latest kept position.
    public struct Position: Sendable, Equatable {
        public let coordinate: Coordinate
        public let recordedAt: Date
        public init(coordinate: Coordinate, recordedAt: Date) {
            self.coordinate = coordinate; self.recordedAt = recordedAt
        }
    }

    private struct State: Sendable {
        var online: Set<String> = []
        var latest: [String: Position] = [:]
        /// One grid per city, by name, and the city each findable provider was last placed in.
        var grids: [String: GeoGrid<String>] = [:]
        var cityOf: [String: String] = [:]
        var lastSweep: Date = .distantPast

        /// True when the provider sits in a city's grid.
        func findable(_ provider: String) -> Bool {
            guard let city = cityOf[provider] else { return false }
            return grids[city]?.contains(provider) == true
        }

        mutating func remove(_ provider: String) {
            if let city = cityOf.removeValue(forKey: provider) { grids[city]?.remove(provider) }
        }
    }

    /// How long a position stays usable after it was recorded.
    public let fixLifetime: TimeInterval
    /// The cities the positions are partitioned by.
    public let cities: Cities
    private let cellDegrees: Double
    private let state: Mutex<State>
    private let now: @Sendable () -> Date

    /// A registry whose positions expire `fixLifetime` seconds after they were recorded, partitioned by `cities`.
    public init(
        fixLifetime: TimeInterval = 120, cellDegrees: Double = 0.01, cities: Cities = .everywhere,
        now: @escaping @Sendable () -> Date
    ) {
        self.fixLifetime = fixLifetime
        self.now = now
        self.cities = cities
        self.cellDegrees = cellDegrees
        state = Mutex(State())
    }

    /// Marks the provider online or offline; a position given with it counts as a fix taken now.
    /// Returns true when the provider has just become findable.
    @discardableResult
    public func setOnline(_ provider: String, _ online: Bool, position: Coordinate? = nil) -> Bool {
        let at = now(), lifetime = fixLifetime
        return state.withLock { s in
            let wasFindable = s.findable(provider)
            if let position, (s.latest[provider]?.recordedAt ?? .distantPast) <= at {
                s.latest[provider] = Position(coordinate: position, recordedAt: at)
            }
            guard online else {
                s.online.remove(provider)
                s.remove(provider)
                return false
            }
            s.online.insert(provider)
            if let latest = s.latest[provider], latest.recordedAt > at.addingTimeInterval(-lifetime) {
                place(&s, provider, at: latest)
            }
            return !wasFindable && s.findable(provider)
        }
    }

    /// Every online provider with their latest kept position (nil before their first), by id.
    public func onlineProviders() -> [(id: String, position: Position?)] {
        state.withLock { s in s.online.sorted().map { ($0, s.latest[$0]) } }
    }

    /// True while the provider says they are online.
    public func isOnline(_ provider: String) -> Bool { state.withLock { $0.online.contains(provider) } }

    /// Records a kept fix (already checked by the ingest) as the provider's latest position; returns true
    /// when the provider has just become findable.
    @discardableResult
    public func update(_ provider: String, to coordinate: Coordinate, recordedAt: Date) -> Bool {
        let at = now(), lifetime = fixLifetime
        return state.withLock { s in
            // The ingest keeps fixes in order; a position given when going online may be newer, so it is kept.
            s.latest[provider] = Position(coordinate: coordinate, recordedAt: recordedAt)
            guard s.online.contains(provider), recordedAt > at.addingTimeInterval(-lifetime) else { return false }
            let wasFindable = s.findable(provider)
            place(&s, provider, at: Position(coordinate: coordinate, recordedAt: recordedAt))
            Self.sweepIfDue(&s, at: at, lifetime: lifetime)
            return !wasFindable && s.findable(provider)
        }
    }

    /// The provider's latest position while it is fresh.
    public func position(of provider: String) -> Position? {
        let cutoff = now().addingTimeInterval(-fixLifetime)
        return state.withLock { s in s.latest[provider].flatMap { $0.recordedAt > cutoff ? $0 : nil } }
    }

    /// Online providers with a fresh position within `radius` metres of `center` and in the city holding it, nearest
    /// first.
    public func nearest(
        to center: Coordinate, limit: Int, within radius: Double,
        where include: (String) -> Bool = { _ in true }
    ) -> [GeoHit<String>] {
        guard let city = cities.city(containing: center) else { return [] }
        let at = now(), lifetime = fixLifetime
        let cutoff = at.addingTimeInterval(-lifetime)
        return state.withLock { s in
            Self.sweepIfDue(&s, at: at, lifetime: lifetime)
            return s.grids[city]?.nearest(to: center, limit: limit, within: radius) { id, recordedAt in
                recordedAt > cutoff && include(id)
            } ?? []
        }
    }

    /// How many providers are findable now (online with a position not yet swept as expired).
    public var findableCount: Int { state.withLock { $0.grids.values.reduce(0) { $0 + $1.count } } }

    /// How many providers are findable now in each city that has any, by name.
    public var findableByCity: [String: Int] {
        state.withLock { $0.grids.compactMapValues { $0.count > 0 ? $0.count : nil } }
    }

    /// Puts the provider in the grid of the city holding `position`, out of any other; outside every city, in none.
    private func place(_ s: inout State, _ provider: String, at position: Position) {
        guard let city = cities.city(containing: position.coordinate) else { s.remove(provider); return }
        if let previous = s.cityOf[provider], previous != city { s.grids[previous]?.remove(provider) }
        s.cityOf[provider] = city
        s.grids[city, default: GeoGrid(cellDegrees: cellDegrees)].upsert(
            provider, at: position.coordinate, recordedAt: position.recordedAt)
    }

    // Expired positions leave the grids at most every 30 seconds; queries skip them meanwhile.
    private static func sweepIfDue(_ s: inout State, at: Date, lifetime: TimeInterval) {
        guard at.timeIntervalSince(s.lastSweep) >= 30 else { return }
        s.lastSweep = at
        let cutoff = at.addingTimeInterval(-lifetime)
        for city in Array(s.grids.keys) { s.grids[city]?.removeAll(recordedBefore: cutoff) }
        s.cityOf = s.cityOf.filter { s.grids[$0.value]?.contains($0.key) == true }
    }
}
