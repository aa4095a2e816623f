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
}
