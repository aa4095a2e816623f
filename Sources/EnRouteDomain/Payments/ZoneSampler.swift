public import EnRouteModels
import Synchronization

/// Keeps `ZoneDemand` current: every `interval` it counts the requests waiting for a provider and the idle providers
/// by zone, and the busy-time multiplier of a quote reads its pickup's zone.
public final class ZoneSampler: Sendable {
    /// How often supply and demand are counted.
    public let interval: Duration
    private let zones: Mutex<ZoneDemand>
    private let count: @Sendable () async throws -> (open: [Coordinate], idle: [Coordinate])
    private let metrics: any MetricsSink

    /// `count` reads the pickups of the requests waiting now and the positions of the idle providers.
    public init(
        zones: ZoneDemand = ZoneDemand(), interval: Duration = .seconds(60), metrics: any MetricsSink = NoMetrics(),
        count: @escaping @Sendable () async throws -> (open: [Coordinate], idle: [Coordinate])
    ) {
        self.zones = Mutex(zones); self.interval = interval; self.metrics = metrics; self.count = count
    }

    /// Counts once now; a count that fails (the provider locations unreachable) leaves the figures as they were.
    public func sample() async {
        guard let counted = try? await count() else {
            metrics.increment(
                "enroute_zone_samples_failed_total", help: "Counts of supply and demand by zone that could not be read."
            )
            return
        }
        zones.withLock { $0.record(open: counted.open, idle: counted.idle) }
    }

    /// Counts now and then every `interval` on `clock` until cancelled.
    public func run(clock: any Clock<Duration>) async {
        while !Task.isCancelled {
            await sample()
            do { try await clock.sleep(for: interval) } catch { return }
        }
    }

    /// The zone holding `point` and its smoothed figures.
    public func figures(at point: Coordinate) -> (zone: HexCell, figures: ZoneDemand.Figures) {
        zones.withLock { $0.figures(at: point) }
    }

    /// Every zone counted, with its figures.
    public var snapshot: ZoneDemand { zones.withLock { $0 } }

    /// Every zone counted, with its centre and the multiplier `rule` gives its figures, busiest first.
    public func levels(rule: DemandRule) -> [ZoneLevel] {
        let demand = snapshot
        return demand.zones.map { cell, f in
            ZoneLevel(
                zone: cell.description, centre: demand.grid.centre(of: cell), open: f.open, idle: f.idle,
                multiplier: rule.multiplier(open: f.open, online: f.idle))
        }.sorted { ($0.multiplier, $0.open, $0.zone) > ($1.multiplier, $1.open, $1.zone) }
    }
}

/// One zone's level of demand as the ops console shows it.
public struct ZoneLevel: Codable, Sendable, Equatable {
    /// The zone's cell (`band/q/r`).
    public let zone: String
    public let centre: Coordinate
    /// Smoothed requests waiting for a provider, and idle providers.
    public let open: Double
    public let idle: Double
    /// The busy-time multiplier a quote in the zone gets now.
    public let multiplier: Double
}
