public import Foundation
public import EnRouteDomain
public import EnRouteModels
public import Routing
import Synchronization
public import EnRouteLogging

/// Live road speeds for a `LocalRoadRouting`: the time-of-day table for the current hour of the week, blended with
/// the speeds providers' kept fixes show (map-matched in windows, smoothed per edge), applied while serving by
/// re-customising the hierarchy and swapping it in. No rebuild of the graph file, no restart.
///
/// `observe` only appends to a per-provider window (it runs on the ingest path); `refresh` does the work (matching,
/// the new weights, the hierarchy) and is run off the cooperative pool by `run(clock:)`.
public final class LiveRoadSpeeds: RoadSpeedFeedback, Sendable {
    /// When and how the weights change.
    public struct Options: Sendable {
        /// Time between refreshes in `run(clock:)`.
        public var refreshInterval: Duration
        /// Fixes a provider's window holds before it is matched (older ones are matched at the next refresh anyway
        /// once the window spans `windowSeconds`).
        public var windowFixes: Int
        /// Seconds a window may span before it is matched.
        public var windowSeconds: TimeInterval
        /// The least relative change of some edge's duration that makes new weights worth a re-customisation.
        public var minimumChange: Double
        /// The zone whose clock the time-of-day table is read in.
        public var timeZone: TimeZone
        /// The map matcher's parameters (fixes from phones: a looser sigma than a survey receiver's).
        public var matching: MapMatcher.Options
        /// The smoothing of observed speeds.
        public var observed: ObservedSpeeds.Options

        /// The defaults: refresh every 30 s, windows of 30 fixes or 60 s, 5 % change, UTC, sigma 10 m.
        public init(
            refreshInterval: Duration = .seconds(30), windowFixes: Int = 30, windowSeconds: TimeInterval = 60,
            minimumChange: Double = 0.05, timeZone: TimeZone = TimeZone(identifier: "UTC")!,
            matching: MapMatcher.Options = MapMatcher.Options(sigmaMeters: 10, betaMeters: 5),
            observed: ObservedSpeeds.Options = ObservedSpeeds.Options()
        ) {
            self.refreshInterval = refreshInterval; self.windowFixes = windowFixes; self.windowSeconds = windowSeconds
            self.minimumChange = minimumChange; self.timeZone = timeZone; self.matching = matching;
            self.observed = observed
        }
    }

    /// What one refresh did.
    public struct Refresh: Sendable, Equatable {
        /// Provider windows matched.
        public var windowsMatched = 0
        /// Edge traversals taken as observations.
        public var traversalsAccepted = 0
        /// Traversals refused as implausible.
        public var traversalsRejected = 0
        /// Whether new weights were swapped in.
        public var applied = false
        /// Edges whose duration changed by at least `minimumChange` since the weights last applied.
        public var edgesChanged = 0
    }

    private struct State: ~Copyable {
        var observed: ObservedSpeeds
        var windows: [String: [MatchFix]] = [:]
        var applied: [Double]
    }

    private let roads: LocalRoadRouting
    private let base: LocalRoadRouting.Graph
    private let profile: TimeOfDaySpeeds
    private let matcher: MapMatcher
    /// The parameters in force.
    public let options: Options
    private let state: Mutex<State>
    private let refreshing = Mutex(false)
    /// Where `run` refreshes: off the cooperative pool, whose few threads keep serving meanwhile.
    private let work = DispatchQueue(label: "EnRouteRoads.LiveRoadSpeeds", qos: .utility)
    private let log: Logger

    /// Live speeds for `roads`, whose current graph is taken as the free-flow base.
    public init(
        roads: LocalRoadRouting, profile: TimeOfDaySpeeds = .standard, options: Options = Options(),
        log: Logger = .discard
    ) {
        self.roads = roads
        let base = roads.graph
        self.base = base
        self.profile = profile
        self.options = options
        self.log = log
        matcher = MapMatcher(network: base.network, graph: base.graph, snapper: base.snapper, options: options.matching)
        state = Mutex(
            State(
                observed: ObservedSpeeds(network: base.network, options: options.observed),
                applied: (0..<base.network.edgeCount).map { base.network.edgeDurationSeconds[$0] }))
    }

    public func observe(provider: String, fixes: [LocationFix]) {
        guard !fixes.isEmpty else { return }
        state.withLock { s in
            s.windows[provider, default: []].append(
                contentsOf: fixes.map {
                    MatchFix(
                        coordinate: RoadCoordinate(lat: $0.lat, lon: $0.lng), time: $0.recordedAt.timeIntervalSince1970)
                })
        }
    }

    /// Edges with a fresh observation now.
    public var observedEdgeCount: Int { state.withLock { $0.observed.observedEdgeCount } }

    /// Matches the windows that are full (or all of them when `flush`), records their traversals, and swaps in new
    /// weights when the hour's table and the observations moved some edge by `minimumChange` or more.
    @discardableResult
    public func refresh(now: Date, flush: Bool = false) -> Refresh {
        // One refresh at a time; a call while one runs does nothing.
        let began = refreshing.withLock { busy in
            guard !busy else { return false }
            busy = true
            return true
        }
        guard began else { return Refresh() }
        defer { refreshing.withLock { $0 = false } }
        var report = Refresh()
        let due: [[MatchFix]] = state.withLock { s in
            var due: [[MatchFix]] = []
            for (provider, window) in s.windows {
                guard let first = window.first, let last = window.last else { continue }
                if flush || window.count >= options.windowFixes || last.time - first.time >= options.windowSeconds {
                    due.append(window)
                    s.windows[provider] = nil
                }
            }
            return due
        }
        let matches = due.map { matcher.match($0) }
        report.windowsMatched = matches.count
        let time = now.timeIntervalSince1970
        let hour = TimeOfDaySpeeds.hourOfWeek(of: now, in: options.timeZone)
        let durations: [Double]? = state.withLock { s in
            for match in matches {
                let (accepted, rejected) = s.observed.record(match)
                report.traversalsAccepted += accepted
                report.traversalsRejected += rejected
            }
            s.observed.prune(now: time)
            let durations = s.observed.durations(of: base.network, profile: profile, hourOfWeek: hour, now: time)
            report.edgesChanged =
                zip(durations, s.applied).filter { new, old in abs(new - old) >= options.minimumChange * max(old, 0.1) }
                .count
            guard report.edgesChanged > 0 else { return nil }
            s.applied = durations
            return durations
        }
        guard let durations else { return report }
        // The same turns with new weights, contracted again in the stored node order (no new ordering search).
        let network = base.network.withEdgeDurations(durations)
        let graph = base.graph.reweighted(edgeDurations: durations)
        let hierarchy = base.hierarchy.customized(graph: graph)
        roads.replace(
            LocalRoadRouting.Graph(network: network, graph: graph, hierarchy: hierarchy, snapper: base.snapper))
        report.applied = true
        log.info(
            Logger.Message(
                "road speeds: \(report.edgesChanged) edge(s) changed (hour \(hour) of the week, "
                    + "\(report.traversalsAccepted) traversal(s) observed), weights swapped in"
            ))
        return report
    }

    /// Refreshes every `refreshInterval` of `clock` until cancelled, each refresh on a queue of its own so the
    /// cooperative pool keeps serving; `now` is the wall time the table and the observations are read at.
    public func run(clock: any Clock<Duration>, now: @escaping @Sendable () -> Date) async {
        while !Task.isCancelled {
            do { try await clock.sleep(for: options.refreshInterval) } catch { return }
            let at = now()
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                work.async { [self] in
                    refresh(now: at)
                    done.resume()
                }
            }
        }
    }
}
