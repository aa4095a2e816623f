public import Foundation
public import EnRouteDomain
public import EnRouteModels
public import Routing
import Synchronization
import Dispatch

/// EnRoute's own road graph behind the domain's `RoadRouting` seam: contraction-hierarchy queries on a pool of
/// routers that share one network, turn graph and hierarchy.
///
/// Queries are CPU work of well under a millisecond and run on the caller's thread; each borrows a router from
/// the pool (a router keeps query state, so it serves one query at a time) and gives it back.
public final class LocalRoadRouting: RoadRouting, Sendable {
    /// The parts one generation of routers is built on.
    public struct Graph: Sendable {
        /// The road network.
        public let network: RoadNetwork
        /// Its edge-based turn graph (carries the weights routed on).
        public let graph: EdgeBasedGraph
        /// The hierarchy over `graph`.
        public let hierarchy: ContractionHierarchy
        /// The spatial index used to snap coordinates.
        public let snapper: EdgeSnapper
        /// `RoadRouter.mainComponent(of: graph)`, computed once here rather than by each router the pool makes (a
        /// router made after a weight swap would otherwise pass over the whole graph inside a request).
        public let mainComponent: [Bool]

        /// Prebuilt parts (the hierarchy built from `graph`, `graph` from `network`).
        public init(
            network: RoadNetwork, graph: EdgeBasedGraph, hierarchy: ContractionHierarchy, snapper: EdgeSnapper? = nil
        ) {
            self.network = network; self.graph = graph; self.hierarchy = hierarchy
            self.snapper = snapper ?? EdgeSnapper(network: network)
            mainComponent = RoadRouter.mainComponent(of: graph)
        }

        /// Builds the turn graph, hierarchy and index from `network`.
        public init(network: RoadNetwork) {
            let graph = EdgeBasedGraph(network: network)
            self.init(network: network, graph: graph, hierarchy: ContractionHierarchy(graph: graph))
        }
    }

    private struct State: ~Copyable {
        var graph: Graph
        var generation = 0
        var idle: [(generation: Int, router: PooledRouter)] = []
    }

    /// A router handed between threads by the pool: only the thread that borrowed it uses it until it is returned.
    private final class PooledRouter: @unchecked Sendable {
        let router: RoadRouter
        init(_ router: RoadRouter) { self.router = router }
    }

    private let state: Mutex<State>
    /// How far from a road a coordinate may be and still be routed from, in metres.
    public let maxSnapDistance: Double

    /// A router over `graph`.
    public init(graph: Graph, maxSnapDistance: Double = EdgeSnapper.defaultMaxDistance) {
        state = Mutex(State(graph: graph))
        self.maxSnapDistance = maxSnapDistance
    }

    /// The parts queries run on now.
    public var graph: Graph { state.withLock { $0.graph } }

    /// How many times the graph was replaced.
    public var generation: Int { state.withLock { $0.generation } }

    /// Routes on `graph` from now on (new weights, say); queries already running finish on the old one.
    public func replace(_ graph: Graph) {
        state.withLock {
            $0.graph = graph
            $0.generation += 1
            $0.idle.removeAll()
        }
    }

    /// Runs `body` on a router of the current generation, borrowed from the pool.
    func withRouter<T>(_ body: (RoadRouter) throws(RouteError) -> T) throws(RouteError) -> T {
        let (generation, pooled): (Int, PooledRouter) = state.withLock { s in
            if let last = s.idle.popLast() { return last }
            let g = s.graph
            return (
                s.generation,
                PooledRouter(
                    RoadRouter(
                        network: g.network, graph: g.graph, hierarchy: g.hierarchy, snapper: g.snapper,
                        mainComponent: g.mainComponent))
            )
        }
        defer {
            state.withLock { s in if s.generation == generation { s.idle.append((generation, pooled)) } }
        }
        return try body(pooled.router)
    }

    public func route(
        from: Coordinate, to: Coordinate, heading: Double?, departure: Date
    ) async throws(RoadRoutingError) -> RoadLeg {
        try routeNow(from: from, to: to, heading: heading)
    }

    public func routeSummary(
        from: Coordinate, to: Coordinate, heading: Double?, departure: Date
    ) async throws(RoadRoutingError) -> RoadLeg {
        try routeSummaryNow(from: from, to: to, heading: heading)
    }

    /// `route` without suspending: the same answer, computed on the caller's thread.
    public func routeNow(from: Coordinate, to: Coordinate, heading: Double?) throws(RoadRoutingError) -> RoadLeg {
        try routeNow(from: from, to: to, heading: heading, detail: .full)
    }

    /// `routeSummary` without suspending: the totals and snapped ends only, no geometry or steps built.
    public func routeSummaryNow(from: Coordinate, to: Coordinate, heading: Double?) throws(RoadRoutingError) -> RoadLeg
    {
        try routeNow(from: from, to: to, heading: heading, detail: .summary)
    }

    private func routeNow(
        from: Coordinate, to: Coordinate, heading: Double?, detail: RouteDetail
    ) throws(RoadRoutingError) -> RoadLeg {
        let maxSnapDistance = self.maxSnapDistance
        do {
            return try withRouter { router throws(RouteError) in
                let route = try router.route(
                    from: RoadCoordinate(from), to: RoadCoordinate(to), startHeading: heading,
                    maxSnapDistance: maxSnapDistance, detail: detail)
                return RoadLeg(route, network: router.network, from: from, to: to)
            }
        } catch {
            throw RoadRoutingError(error)
        }
    }

    public func table(
        sources: [Coordinate], destinations: [Coordinate], departure: Date
    ) async throws(RoadRoutingError) -> [[RoadCost?]] {
        try tableNow(sources: sources, destinations: destinations)
    }

    /// `table` without suspending.
    public func tableNow(sources: [Coordinate], destinations: [Coordinate]) throws(RoadRoutingError) -> [[RoadCost?]] {
        let maxSnapDistance = self.maxSnapDistance
        do {
            let table = try withRouter { router throws(RouteError) in
                try router.table(
                    sources: sources.map(RoadCoordinate.init), destinations: destinations.map(RoadCoordinate.init),
                    maxSnapDistance: maxSnapDistance)
            }
            return (0..<sources.count).map { row in
                (0..<destinations.count).map { column in
                    let cell = row * destinations.count + column
                    guard table.weights[cell] != Int.max else { return nil }
                    return RoadCost(
                        durationSeconds: EdgeBasedGraph.seconds(ofWeight: table.weights[cell]),
                        distanceMeters: table.distances[cell])
                }
            }
        } catch {
            throw RoadRoutingError(error)
        }
    }

    public func nearest(_ coordinate: Coordinate, heading: Double?) async throws(RoadRoutingError) -> RoadWaypoint {
        try nearestNow(coordinate, heading: heading)
    }

    /// `nearest` without suspending.
    public func nearestNow(_ coordinate: Coordinate, heading: Double?) throws(RoadRoutingError) -> RoadWaypoint {
        let g = graph
        guard let snap = g.snapper.snap(RoadCoordinate(coordinate), heading: heading, maxDistance: maxSnapDistance)
        else {
            throw .noSegment(index: 0)
        }
        return RoadWaypoint(snap, network: g.network)
    }
}

extension LocalRoadRouting {
    /// The track matched by `Routing.MapMatcher` (an HMM after Newson & Krumm) on the current graph: its matched
    /// segments' length and free-flow driving time; breaks (no road near, gaps) are left out, never bridged. A whole
    /// trip's Viterbi is more than a query's work, so it runs on a dispatch queue, off the cooperative pool.
    public func match(_ fixes: [RoadFix]) async throws(RoadRoutingError) -> MatchedPath {
        let result: Result<MatchedPath, RoadRoutingError> = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .utility).async {
                do throws(RoadRoutingError) { continuation.resume(returning: .success(try self.matchNow(fixes))) } catch
                { continuation.resume(returning: .failure(error)) }
            }
        }
        return try result.get()
    }

    /// `match` without suspending (CPU work on the caller's thread).
    public func matchNow(_ fixes: [RoadFix]) throws(RoadRoutingError) -> MatchedPath {
        let g = graph
        let matcher = MapMatcher(network: g.network, graph: g.graph, snapper: g.snapper)
        let matched = matcher.match(
            fixes.map { MatchFix(coordinate: RoadCoordinate($0.coordinate), time: $0.recordedAt.timeIntervalSince1970) }
        )
        guard !matched.segments.isEmpty else { throw .noSegment(index: 0) }
        return MatchedPath(
            distanceMeters: matched.distanceMeters, durationSeconds: matched.durationSeconds,
            matchedFixes: matched.snapped.compactMap { $0 }.count,
            geometry: matched.segments.flatMap { $0.geometry.map(Coordinate.init) })
    }
}

extension RoadCoordinate {
    /// The same point in the routing library's terms.
    init(_ coordinate: Coordinate) { self.init(lat: coordinate.lat, lon: coordinate.lng) }
}

extension Coordinate {
    /// The same point in the wire's terms.
    init(_ coordinate: RoadCoordinate) { self.init(lat: coordinate.lat, lng: coordinate.lon) }
}

extension RoadRoutingError {
    init(_ error: RouteError) {
        switch error {
        case .noSegment(let index): self = .noSegment(index: index)
        case .noRoute: self = .noRoute
        }
    }
}

extension RoadWaypoint {
    init(_ snap: EdgeSnap, network: RoadNetwork) {
        self.init(
            location: Coordinate(snap.coordinate), name: network.name(ofEdge: snap.edge),
            distanceMeters: snap.distanceMeters, bearing: snap.bearing)
    }
}

extension RouteManeuver {
    init(_ step: RouteStep) {
        self.init(
            type: step.type.rawValue, modifier: step.modifier?.rawValue, name: step.name,
            distanceMeters: step.distanceMeters, durationSeconds: step.durationSeconds,
            location: Coordinate(step.location),
            bearingBefore: Int(step.bearingBefore.rounded()) % 360,
            bearingAfter: Int(step.bearingAfter.rounded()) % 360,
            exit: step.exit)
    }
}

extension RoadLeg {
    init(_ route: RoadRoute, network: RoadNetwork, from: Coordinate, to: Coordinate) {
        self.init(
            distanceMeters: route.distanceMeters, durationSeconds: route.durationSeconds,
            geometry: route.geometry.map(Coordinate.init), steps: route.steps.map(RouteManeuver.init),
            start: RoadWaypoint(route.start, network: network), end: RoadWaypoint(route.end, network: network),
            roadClass: RoadClass(edgeRawValue: route.mainRoadClass)?.highwayValue ?? "all")
    }
}
