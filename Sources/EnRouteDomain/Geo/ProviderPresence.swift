public import Foundation
public import EnRouteModels
import Synchronization

/// Who is online and where: each provider's latest kept position, kept in memory with an expiry,
/// and a grid over the positions of online providers (seed 004 §44.4, "an ephemeral signal").
///
/// An online provider is findable only while their latest position is fresh (`fixLifetime`); one who
/// goes offline, or whose position expires, is found by neither dispatch nor the nearby map.
public final class ProviderPresence: Sendable {
    /// A provider's latest kept position.
    public struct Position: Sendable, Equatable {
        public let coordinate: Coordinate
        public let recordedAt: Date
        public init(coordinate: Coordinate, recordedAt: Date) { self.coordinate = coordinate; self.recordedAt = recordedAt }
    }

    private struct State: Sendable {
        var online: Set<String> = []
        var latest: [String: Position] = [:]
        var grid: GeoGrid<String>
        var lastSweep: Date = .distantPast
    }

    /// How long a position stays usable after it was recorded.
    public let fixLifetime: TimeInterval
    private let state: Mutex<State>
    private let now: @Sendable () -> Date

    /// A registry whose positions expire `fixLifetime` seconds after they were recorded.
    public init(fixLifetime: TimeInterval = 120, cellDegrees: Double = 0.01, now: @escaping @Sendable () -> Date) {
        self.fixLifetime = fixLifetime
        self.now = now
        state = Mutex(State(grid: GeoGrid(cellDegrees: cellDegrees)))
    }

    /// Marks the provider online or offline; a position given with it counts as a fix taken now.
    /// Returns true when the provider has just become findable.
    @discardableResult
    public func setOnline(_ provider: String, _ online: Bool, position: Coordinate? = nil) -> Bool {
        let at = now(), lifetime = fixLifetime
        return state.withLock { s in
            let wasFindable = s.grid.contains(provider)
            if let position, (s.latest[provider]?.recordedAt ?? .distantPast) <= at {
                s.latest[provider] = Position(coordinate: position, recordedAt: at)
            }
            guard online else {
                s.online.remove(provider)
                s.grid.remove(provider)
                return false
            }
            s.online.insert(provider)
            if let latest = s.latest[provider], latest.recordedAt > at.addingTimeInterval(-lifetime) {
                s.grid.upsert(provider, at: latest.coordinate, recordedAt: latest.recordedAt)
            }
            return !wasFindable && s.grid.contains(provider)
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
            let wasFindable = s.grid.contains(provider)
            s.grid.upsert(provider, at: coordinate, recordedAt: recordedAt)
            Self.sweepIfDue(&s, at: at, lifetime: lifetime)
            return !wasFindable
        }
    }

    /// The provider's latest position while it is fresh.
    public func position(of provider: String) -> Position? {
        let cutoff = now().addingTimeInterval(-fixLifetime)
        return state.withLock { s in s.latest[provider].flatMap { $0.recordedAt > cutoff ? $0 : nil } }
    }

    /// Online providers with a fresh position within `radius` metres of `center`, nearest first.
    public func nearest(to center: Coordinate, limit: Int, within radius: Double,
                        where include: (String) -> Bool = { _ in true }) -> [GeoHit<String>] {
        let at = now(), lifetime = fixLifetime
        let cutoff = at.addingTimeInterval(-lifetime)
        return state.withLock { s in
            Self.sweepIfDue(&s, at: at, lifetime: lifetime)
            return s.grid.nearest(to: center, limit: limit, within: radius) { id, recordedAt in recordedAt > cutoff && include(id) }
        }
    }

    /// How many providers are findable now (online with a position not yet swept as expired).
    public var findableCount: Int { state.withLock { $0.grid.count } }

    // Expired positions leave the grid at most every 30 seconds; queries skip them meanwhile.
    private static func sweepIfDue(_ s: inout State, at: Date, lifetime: TimeInterval) {
        guard at.timeIntervalSince(s.lastSweep) >= 30 else { return }
        s.lastSweep = at
        s.grid.removeAll(recordedBefore: at.addingTimeInterval(-lifetime))
    }
}
