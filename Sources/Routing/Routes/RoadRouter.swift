/// How much of a route to build.
public enum RouteDetail: Sendable, Hashable {
    /// Totals, geometry and steps.
    case full
    /// Distance, duration and weight only (the same totals as `full`); no geometry, no steps.
    case summary
}

/// Routes and tables between coordinates: snaps them onto the network, queries the contraction hierarchy with
/// the snapped positions' partial-edge offsets, and turns the path into geometry and maneuvers.
///
/// Without a heading a position on a two-way street may be left or reached in either direction. Not thread-safe
/// (its query objects keep state): one router per thread, sharing the network, graph and hierarchy.
public final class RoadRouter {
    /// The road network routed on.
    public let network: RoadNetwork
    /// Its edge-based turn graph.
    public let graph: EdgeBasedGraph
    /// The hierarchy over `graph`.
    public let hierarchy: ContractionHierarchy
    /// The spatial index used to snap coordinates.
    public let snapper: EdgeSnapper
    private let query: CHQuery
    private let tableQuery: CHTable
    /// Whether each edge lies in the turn graph's largest strongly connected component: where the nearest roads
    /// do not connect (an edge that can be left but never reached, cut off by a turn restriction; a trap at an
    /// extract's edge), a route falls back to the nearest roads of this component, as OSRM's nearest search does.
    private let inMainComponent: [Bool]

    /// A router over prebuilt parts (the hierarchy must be built from `graph`, and `graph` from `network`);
    /// `mainComponent` is `RoadRouter.mainComponent(of: graph)` when the caller already has it (routers over one graph
    /// share it), else computed here.
    public init(
        network: RoadNetwork, graph: EdgeBasedGraph, hierarchy: ContractionHierarchy, snapper: EdgeSnapper? = nil,
        mainComponent: [Bool]? = nil
    ) {
        precondition(
            mainComponent == nil || mainComponent!.count == graph.nodeCount, "one flag per edge of the turn graph")
        self.network = network
        self.graph = graph
        self.hierarchy = hierarchy
        self.snapper = snapper ?? EdgeSnapper(network: network)
        query = CHQuery(hierarchy: hierarchy)
        tableQuery = CHTable(hierarchy: hierarchy)
        inMainComponent = mainComponent ?? Self.largestComponent(of: graph)
    }

    /// Whether each edge lies in the turn graph's largest strongly connected component (what a router falls back
    /// to where the nearest roads do not connect): a pass over the whole graph, to compute once per graph.
    public static func mainComponent(of graph: EdgeBasedGraph) -> [Bool] { largestComponent(of: graph) }

    /// A router that builds the turn graph, the hierarchy and the snapping index from `network`.
    public convenience init(network: RoadNetwork) {
        let graph = EdgeBasedGraph(network: network)
        self.init(network: network, graph: graph, hierarchy: ContractionHierarchy(graph: graph))
    }

    /// The fastest route from `from` to `to`, each snapped within `maxSnapDistance` metres; a heading (degrees
    /// from north) picks the direction of travel at that end. `.summary` leaves out the geometry and steps.
    public func route(
        from: RoadCoordinate, to: RoadCoordinate, startHeading: Double? = nil, endHeading: Double? = nil,
        maxSnapDistance: Double = EdgeSnapper.defaultMaxDistance, detail: RouteDetail = .full
    ) throws(RouteError) -> RoadRoute {
        var sources = try endpoints(from, heading: startHeading, maxDistance: maxSnapDistance, index: 0)
        var targets = try endpoints(to, heading: endHeading, maxDistance: maxSnapDistance, index: 1)
        if Set(sources.map(\.edge)).isDisjoint(with: targets.map(\.edge)) {
            // On a junction, starting at the very end of an edge into it and turning never beats starting on the
            // edge out of it, which is in the same set (and the mirror at the end), so those seeds only add
            // zero-length pieces; where the ends share an edge every seed stays for the pairwise search.
            sources = Self.keep(sources) { $0.fraction < 1 }
            targets = Self.keep(targets) { $0.fraction > 0 }
        }
        if let route = route(from: sources, to: targets, detail: detail) { return route }
        guard
            let route = mainComponentRoute(
                from, to, startHeading: startHeading, endHeading: endHeading, maxSnapDistance: maxSnapDistance,
                sources: sources, targets: targets, detail: detail)
        else { throw .noRoute }
        return route
    }

    /// Where the nearest roads do not connect (one end on a part that can be entered but not left, or the
    /// reverse): the route from or to the nearest roads of the main component instead, as OSRM does with its
    /// big-component snaps; nil when none connects either.
    private func mainComponentRoute(
        _ from: RoadCoordinate, _ to: RoadCoordinate, startHeading: Double?, endHeading: Double?,
        maxSnapDistance: Double, sources: [EdgeSnap], targets: [EdgeSnap], detail: RouteDetail
    ) -> RoadRoute? {
        let mainSources = mainComponentSnaps(from, heading: startHeading, maxDistance: maxSnapDistance)
        let mainTargets = mainComponentSnaps(to, heading: endHeading, maxDistance: maxSnapDistance)
        for (starts, ends) in [(mainSources, targets), (sources, mainTargets), (mainSources, mainTargets)]
        where !starts.isEmpty && !ends.isEmpty && (starts != sources || ends != targets) {
            if let route = route(from: starts, to: ends, detail: detail) { return route }
        }
        return nil
    }

    /// How far the main component's roads are looked for when an end's nearest roads lead nowhere: OSRM snaps
    /// its big-component end at any distance; this stops at a distance no pickup point would be walked.
    public static let mainComponentSearchLimit = 3_200.0

    /// The main component's nearest roads to `coordinate`: within `maxDistance`, else in doubling circles up
    /// to `mainComponentSearchLimit`.
    private func mainComponentSnaps(_ coordinate: RoadCoordinate, heading: Double?, maxDistance: Double) -> [EdgeSnap] {
        var radius = maxDistance
        while true {
            let found = snaps(coordinate, heading: heading, maxDistance: radius, mainComponentOnly: true)
            if !found.isEmpty || radius >= Self.mainComponentSearchLimit { return found }
            radius = min(Self.mainComponentSearchLimit, radius * 2)
        }
    }

    /// The fastest route from any of `sources` to any of `targets` (snapped positions, each a direction of travel).
    public func route(from sources: [EdgeSnap], to targets: [EdgeSnap], detail: RouteDetail = .full) -> RoadRoute? {
        guard let (edges, source, target, weight) = fastestPath(from: sources, to: targets) else { return nil }
        return assemble(edges: edges, start: source, end: target, weight: weight, detail: detail)
    }

    /// Durations and distances from every source coordinate to every destination; nil cells are unreachable.
    /// Throws `noSegment` with the index among sources then destinations for a coordinate not near a road.
    public func table(
        sources: [RoadCoordinate], destinations: [RoadCoordinate],
        maxSnapDistance: Double = EdgeSnapper.defaultMaxDistance
    ) throws(RouteError) -> RouteTable {
        var sourceSnaps: [[EdgeSnap]] = [], targetSnaps: [[EdgeSnap]] = []
        for (index, coordinate) in sources.enumerated() {
            sourceSnaps.append(try endpoints(coordinate, heading: nil, maxDistance: maxSnapDistance, index: index))
        }
        for (index, coordinate) in destinations.enumerated() {
            targetSnaps.append(
                try endpoints(coordinate, heading: nil, maxDistance: maxSnapDistance, index: sources.count + index))
        }
        var table = tableQuery.table(
            sources: sourceSnaps.map { $0.map(sourceEndpoint) }, targets: targetSnaps.map { $0.map(targetEndpoint) })
        // Where a source and a destination share an edge the buckets may pair an end behind a start on it; those
        // cells are answered one by one.
        for (row, starts) in sourceSnaps.enumerated() {
            let startEdges = Set(starts.map(\.edge))
            for (column, ends) in targetSnaps.enumerated() where ends.contains(where: { startEdges.contains($0.edge) })
            {
                let cell = row * destinations.count + column
                if let route = route(from: starts, to: ends, detail: .summary) {
                    table.weights[cell] = route.weight
                    table.distances[cell] = route.distanceMeters
                } else {
                    table.weights[cell] = Int.max
                    table.distances[cell] = 0
                }
            }
        }
        // Cells the nearest roads do not connect get the route's fallback to the main component, so a table cell
        // always equals the route between the same coordinates.
        for (row, starts) in sourceSnaps.enumerated() {
            for (column, ends) in targetSnaps.enumerated()
            where table.weights[row * destinations.count + column] == Int.max {
                guard
                    let route = mainComponentRoute(
                        sources[row], destinations[column], startHeading: nil, endHeading: nil,
                        maxSnapDistance: maxSnapDistance, sources: starts, targets: ends,
                        detail: .summary)
                else { continue }
                table.weights[row * destinations.count + column] = route.weight
                table.distances[row * destinations.count + column] = route.distanceMeters
            }
        }
        return table
    }

    /// The snapped directions of travel at a coordinate: the snapped edge, and its reverse unless a heading
    /// within tolerance chose the direction.
    public func endpoints(
        _ coordinate: RoadCoordinate, heading: Double? = nil,
        maxDistance: Double = EdgeSnapper.defaultMaxDistance, index: Int = 0
    ) throws(RouteError) -> [EdgeSnap] {
        let result = snaps(coordinate, heading: heading, maxDistance: maxDistance, mainComponentOnly: false)
        guard !result.isEmpty else { throw .noSegment(index: index) }
        return result
    }

    /// The snapped directions of travel at a coordinate (only on edges of the turn graph's largest strongly
    /// connected component when `mainComponentOnly`; empty when none is that near).
    private func snaps(
        _ coordinate: RoadCoordinate, heading: Double?, maxDistance: Double, mainComponentOnly: Bool
    ) -> [EdgeSnap] {
        func include(_ edge: Int32) -> Bool {
            !mainComponentOnly || inMainComponent[Int(edge)]
                || (snapper.reverse(of: edge).map { inMainComponent[Int($0)] } ?? false)
        }
        // Without a heading only the edges as near as the nearest matter; with one, any edge within reach may.
        let pool =
            heading == nil
            ? snapper.nearestCandidates(
                near: coordinate, maxDistance: maxDistance, slack: Self.junctionSlack, where: include)
            : snapper.candidates(near: coordinate, maxDistance: maxDistance).filter { include($0.edge) }
        guard let nearest = pool.first else { return [] }
        if let heading,
            let snap = pool.first(where: {
                EdgeSnapper.angleBetween($0.bearing, heading) <= EdgeSnapper.defaultHeadingTolerance
            })
        {
            return [snap]
        }
        // Every edge as near as the nearest (all the edges meeting at a junction the coordinate is on), each
        // in both directions where the street is two-way.
        var result: [EdgeSnap] = []
        for snap in pool where snap.distanceMeters <= nearest.distanceMeters + Self.junctionSlack {
            guard !result.contains(where: { $0.edge == snap.edge }) else { continue }
            result.append(snap)
            if let reverse = snapper.reverse(of: snap.edge), !result.contains(where: { $0.edge == reverse }) {
                result.append(snapper.mirrored(snap, onto: reverse))
            }
        }
        return result
    }

    /// Metres within which every edge counts as nearest: all the edges meeting at a junction the coordinate is on.
    static let junctionSlack = 0.5

    /// The snaps that pass `test`, or all of them when none does.
    private static func keep(_ snaps: [EdgeSnap], _ test: (EdgeSnap) -> Bool) -> [EdgeSnap] {
        let kept = snaps.filter(test)
        return kept.isEmpty ? snaps : kept
    }

    /// The turn graph's largest strongly connected component, by an iterative Tarjan.
    static func largestComponent(of graph: EdgeBasedGraph) -> [Bool] {
        let count = graph.nodeCount
        var index = [Int32](repeating: -1, count: count), low = [Int32](repeating: 0, count: count)
        var onStack = [Bool](repeating: false, count: count), component = [Int32](repeating: -1, count: count)
        var stack: [Int32] = [], sizes: [Int] = []
        var call: [(node: Int32, arc: Int32)] = []
        var next: Int32 = 0
        for root in 0..<count where index[root] < 0 {
            call.append((Int32(root), graph.firstArc[root]))
            index[root] = next; low[root] = next; next += 1
            stack.append(Int32(root)); onStack[root] = true
            while let (node, arc) = call.last {
                let here = Int(node)
                if arc < graph.firstArc[here + 1] {
                    call[call.count - 1].arc = arc + 1
                    let head = Int(graph.arcHead[Int(arc)])
                    if index[head] < 0 {
                        index[head] = next; low[head] = next; next += 1
                        stack.append(Int32(head)); onStack[head] = true
                        call.append((Int32(head), graph.firstArc[head]))
                    } else if onStack[head] {
                        low[here] = min(low[here], index[head])
                    }
                    continue
                }
                call.removeLast()
                if let parent = call.last { low[Int(parent.node)] = min(low[Int(parent.node)], low[here]) }
                guard low[here] == index[here] else { continue }
                var size = 0
                while let member = stack.popLast() {
                    onStack[Int(member)] = false
                    component[Int(member)] = Int32(sizes.count)
                    size += 1
                    if member == node { break }
                }
                sizes.append(size)
            }
        }
        guard let largest = sizes.indices.max(by: { sizes[$0] < sizes[$1] }) else { return [] }
        return component.map { $0 == Int32(largest) }
    }

    // MARK: - Query

    /// The weight of the driven part of a snap's edge, up to the snapped position.
    func drivenWeight(_ snap: EdgeSnap) -> Int32 {
        Int32((snap.fraction * Double(graph.edgeWeight[Int(snap.edge)])).rounded())
    }

    private func sourceEndpoint(_ snap: EdgeSnap) -> RouteEndpoint {
        RouteEndpoint(edge: snap.edge, weightOffset: -drivenWeight(snap), lengthOffset: -snap.metersAlongEdge)
    }

    private func targetEndpoint(_ snap: EdgeSnap) -> RouteEndpoint {
        RouteEndpoint(edge: snap.edge, weightOffset: drivenWeight(snap), lengthOffset: snap.metersAlongEdge)
    }

    /// The fastest path's edges, its source and target snaps and its weight.
    private func fastestPath(from sources: [EdgeSnap], to targets: [EdgeSnap]) -> ([Int32], EdgeSnap, EdgeSnap, Int)? {
        let sourceEdges = Set(sources.map(\.edge))
        guard targets.contains(where: { sourceEdges.contains($0.edge) }) else {
            guard let path = query.route(from: sources.map(sourceEndpoint), to: targets.map(targetEndpoint)),
                let source = sources.first(where: { $0.edge == path.edges.first }),
                let target = targets.last(where: { $0.edge == path.edges.last })
            else { return nil }
            return (path.edges, source, target, path.weight)
        }
        // A shared edge: each pair on its own, so an end behind a start on one edge drives round rather than back.
        var best: ([Int32], EdgeSnap, EdgeSnap, Int)?
        for source in sources {
            for target in targets {
                guard let candidate = fastestPath(from: source, to: target) else { continue }
                if best == nil || candidate.3 < best!.3 { best = candidate }
            }
        }
        return best
    }

    private func fastestPath(from source: EdgeSnap, to target: EdgeSnap) -> ([Int32], EdgeSnap, EdgeSnap, Int)? {
        if source.edge != target.edge {
            guard let path = query.route(from: [sourceEndpoint(source)], to: [targetEndpoint(target)]) else {
                return nil
            }
            return (path.edges, source, target, path.weight)
        }
        if target.fraction >= source.fraction {
            return ([source.edge], source, target, Int(drivenWeight(target) - drivenWeight(source)))
        }
        // The end lies behind the start: leave the edge by one of its turns and come back to it.
        let edge = Int(source.edge), driven = drivenWeight(source)
        let turns = (Int(graph.firstArc[edge])..<Int(graph.firstArc[edge + 1])).map {
            RouteEndpoint(
                edge: graph.arcHead[$0], weightOffset: graph.arcWeight[$0] - driven,
                lengthOffset: Double(graph.arcLength[$0]) - source.metersAlongEdge)
        }
        guard !turns.isEmpty, let path = query.route(from: turns, to: [targetEndpoint(target)]) else { return nil }
        return ([source.edge] + path.edges, source, target, path.weight)
    }
}

extension RoadNetwork {
    /// The part of an edge's geometry between two fractions of its length (0 its tail, 1 its head), `from ≤ to`.
    func slice(ofEdge edge: Int32, from: Double, to: Double) -> [RoadCoordinate] {
        let points = geometry(ofEdge: edge)
        var along = [0.0]
        for (a, b) in zip(points, points.dropFirst()) { along.append(along[along.count - 1] + Self.distance(a, b)) }
        let total = along[along.count - 1]
        guard total > 0 else { return [points[0], points[0]] }
        func point(at fraction: Double) -> (RoadCoordinate, Int) {
            let meters = fraction * total
            var segment = 0
            while segment < points.count - 2, along[segment + 1] < meters { segment += 1 }
            let length = along[segment + 1] - along[segment]
            let t = length > 0 ? min(1, max(0, (meters - along[segment]) / length)) : 0
            let a = points[segment], b = points[segment + 1]
            return (RoadCoordinate(lat: a.lat + t * (b.lat - a.lat), lon: a.lon + t * (b.lon - a.lon)), segment)
        }
        let (first, firstSegment) = point(at: from)
        let (last, lastSegment) = point(at: to)
        var result = [first]
        if lastSegment > firstSegment { result += points[(firstSegment + 1)...lastSegment] }
        result.append(last)
        return result
    }
}
