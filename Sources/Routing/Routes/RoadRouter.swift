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

    private func drivenWeight(_ snap: EdgeSnap) -> Int32 {
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

    // MARK: - Assembly

    /// The weight of the turn `from → to` (the tail edge's weight, the via node's delay and the turn's cost).
    private func turnWeight(from: Int32, to: Int32) -> Int32 {
        for arc in Int(graph.firstArc[Int(from)])..<Int(graph.firstArc[Int(from) + 1]) where graph.arcHead[arc] == to {
            return graph.arcWeight[arc]
        }
        preconditionFailure("a route's consecutive edges must be joined by a turn")
    }

    /// One edge of a route (or the driven part of it at either end): its span as fractions of the edge, metres and
    /// weight.
    private struct Piece {
        var edge: Int32
        var from: Double
        var to: Double
        var meters: Double
        var weight: Int
        /// The sliced points of a partial edge; nil for a whole edge, whose points are read from the network.
        var partial: [RoadCoordinate]?
    }

    /// The route's pieces: every edge with its driven span, metres and weight (the turn into the next edge
    /// included). Only the partial first and last edges are sliced; a whole edge's length is the network's
    /// (measured along the same geometry when it was built).
    private func pieces(edges: [Int32], start: EdgeSnap, end: EdgeSnap) -> [Piece] {
        let guides = network.guides
        var pieces: [Piece] = []
        pieces.reserveCapacity(edges.count)
        for (index, edge) in edges.enumerated() {
            let isFirst = index == 0, isLast = index == edges.count - 1
            let from = isFirst ? start.fraction : 0, to = isLast ? end.fraction : 1
            var pieceWeight = isLast ? Int(drivenWeight(end)) : Int(turnWeight(from: edge, to: edges[index + 1]))
            if isFirst { pieceWeight -= Int(drivenWeight(start)) }
            if from == 0 && to == 1 {
                pieces.append(
                    Piece(
                        edge: edge, from: from, to: to, meters: guides[Int(edge)].lengthMeters, weight: pieceWeight,
                        partial: nil))
            } else {
                let geometry = network.slice(ofEdge: edge, from: from, to: to)
                pieces.append(
                    Piece(
                        edge: edge, from: from, to: to, meters: RoadNetwork.length(of: geometry), weight: pieceWeight,
                        partial: geometry))
            }
        }
        return pieces
    }

    private func assemble(edges: [Int32], start: EdgeSnap, end: EdgeSnap, weight: Int, detail: RouteDetail) -> RoadRoute
    {
        let pieces = pieces(edges: edges, start: start, end: end)
        // Summed in the same order whatever the detail, so a summary's distance is the full route's to the bit.
        let meters = pieces.reduce(0) { $0 + $1.meters }
        let total = pieces.reduce(0) { $0 + $1.weight }
        assert(total == weight, "the pieces' weights must add up to the path's")
        let mainClass = mainRoadClass(of: pieces)
        guard detail == .full else {
            return RoadRoute(
                distanceMeters: meters, durationSeconds: EdgeBasedGraph.seconds(ofWeight: total), weight: total,
                geometry: [], steps: [], start: start, end: end, edges: edges, mainRoadClass: mainClass)
        }
        let steps = makeSteps(pieces: pieces, start: start, end: end)
        // The steps' geometries joined (each after the first begins where the one before ends); the arrive step's
        // two points are the end, already there.
        var geometry: [RoadCoordinate] = []
        geometry.reserveCapacity(steps.reduce(0) { $0 + $1.geometry.count })
        for step in steps.dropLast() { geometry += geometry.isEmpty ? step.geometry[...] : step.geometry.dropFirst() }
        return RoadRoute(
            distanceMeters: meters, durationSeconds: EdgeBasedGraph.seconds(ofWeight: total), weight: total,
            geometry: geometry, steps: steps, start: start, end: end, edges: edges, mainRoadClass: mainClass)
    }

    /// The class the pieces spend the most time on (ties to the more important, lower raw value).
    private func mainRoadClass(of pieces: [Piece]) -> UInt8 {
        // On the stack: this runs for every route answered.
        let guides = network.guides
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 256) { seconds in
            seconds.initialize(repeating: 0)
            for piece in pieces {
                seconds[Int(guides[Int(piece.edge)].roadClass)] += piece.weight % EdgeBasedGraph.destinationEntryWeight
            }
            var best = 0
            for raw in seconds.indices where seconds[raw] > seconds[best] { best = raw }
            return UInt8(best)
        }
    }

    /// Appends a piece's points to `points`, less its first where `points` already ends there.
    private func append(_ piece: Piece, to points: inout [RoadCoordinate]) {
        if let partial = piece.partial {
            points += points.isEmpty ? partial[...] : partial.dropFirst()
            return
        }
        let guide = network.guides[Int(piece.edge)]
        let first = Int(guide.geometryStart) + (points.isEmpty ? 0 : 1), end = Int(guide.geometryEnd)
        guard first < end else { return }
        network.geometryLats.withUnsafeBufferPointer { lats in
            network.geometryLons.withUnsafeBufferPointer { lons in
                for index in first..<end { points.append(RoadCoordinate(lat: lats[index], lon: lons[index])) }
            }
        }
    }

    private func makeSteps(pieces: [Piece], start: EdgeSnap, end: EdgeSnap) -> [RouteStep] {
        let guides = network.guides
        var steps: [RouteStep] = []
        var current = RouteStep(
            type: .depart, modifier: nil, name: network.name(ofEdge: pieces[0].edge), distanceMeters: 0,
            durationSeconds: 0, location: start.coordinate, bearingBefore: 0, bearingAfter: start.bearing,
            geometry: [])
        var currentName = guides[Int(pieces[0].edge)].name
        var weight = 0
        func add(_ piece: Piece) {
            append(piece, to: &current.geometry)
            current.distanceMeters += piece.meters
            weight += piece.weight
        }
        add(pieces[0])
        // On a roundabout: the exits passed so far and the heading it was entered with.
        var roundabout: (exits: Int, entryBearing: Double)?
        func startStep(
            _ type: RouteStep.ManeuverType, _ modifier: RouteStep.Modifier?, from previous: Piece, onto piece: Piece
        ) {
            current.durationSeconds = EdgeBasedGraph.seconds(ofWeight: weight)
            steps.append(current)
            let guide = guides[Int(piece.edge)]
            current = RouteStep(
                type: type, modifier: modifier, name: network.names[Int(guide.name)], distanceMeters: 0,
                durationSeconds: 0, location: network.coordinate(ofNode: guide.from),
                bearingBefore: guides[Int(previous.edge)].endBearing, bearingAfter: guide.startBearing, geometry: [])
            currentName = guide.name
            weight = 0
        }
        for (previous, piece) in zip(pieces, pieces.dropFirst()) {
            let wasOn = guides[Int(previous.edge)].isRoundabout, isOn = guides[Int(piece.edge)].isRoundabout
            if !wasOn && isOn {
                // Entering: one step for the whole roundabout, named and aimed by the way out once it is known.
                startStep(.roundabout, nil, from: previous, onto: piece)
                roundabout = (0, guides[Int(previous.edge)].endBearing)
                add(piece)
                continue
            }
            if wasOn && isOn {
                // Going round: every node passed that offers a way off is an exit passed.
                let via = Int(guides[Int(previous.edge)].to)
                let offers = (Int(graph.nodeFirstDeparture[via])..<Int(graph.nodeFirstDeparture[via + 1]))
                    .contains { !guides[Int(graph.nodeDepartures[$0])].isRoundabout }
                if offers { roundabout?.exits += 1 }
                add(piece)
                continue
            }
            if wasOn && !isOn {
                // OSRM numbers the exit on both steps: the roundabout's and the one leaving it.
                let exit = roundabout.map { $0.exits + 1 }
                if let entered = roundabout, current.type == .roundabout {
                    current.exit = entered.exits + 1
                    current.modifier = RouteStep.Modifier(
                        turnAngle: Self.turnAngle(from: entered.entryBearing, to: guides[Int(piece.edge)].startBearing))
                    current.name = network.name(ofEdge: piece.edge)
                }
                roundabout = nil
                startStep(
                    .exitRoundabout,
                    RouteStep.Modifier(
                        turnAngle: Self.turnAngle(
                            from: guides[Int(previous.edge)].endBearing,
                            to: guides[Int(piece.edge)].startBearing)),
                    from: previous, onto: piece)
                current.exit = exit
                add(piece)
                continue
            }
            if let (type, modifier) = maneuver(
                from: guides[Int(previous.edge)], to: guides[Int(piece.edge)], currentName: currentName)
            {
                startStep(type, modifier, from: previous, onto: piece)
            }
            add(piece)
        }
        current.durationSeconds = EdgeBasedGraph.seconds(ofWeight: weight)
        steps.append(current)
        steps.append(
            RouteStep(
                type: .arrive, modifier: nil, name: network.name(ofEdge: end.edge), distanceMeters: 0,
                durationSeconds: 0,
                location: end.coordinate, bearingBefore: end.bearing, bearingAfter: 0,
                geometry: [end.coordinate, end.coordinate]))
        return steps
    }

    /// The change of heading from `from` to `to` (degrees from north), in (-180, 180], positive to the right.
    static func turnAngle(from: Double, to: Double) -> Double {
        var angle = to - from
        if angle > 180 { angle -= 360 } else if angle <= -180 { angle += 360 }
        return angle
    }

    /// The maneuver from `from` onto `to` during a step on `currentName`, or nil when the driver just carries on
    /// (along the same street, or straight through an unnamed piece, which keeps the step's name).
    private func maneuver(
        from: EdgeGuide, to: EdgeGuide, currentName: Int32
    ) -> (RouteStep.ManeuverType, RouteStep.Modifier)? {
        let angle = Self.turnAngle(from: from.endBearing, to: to.startBearing)
        let isUTurn = to.to == from.from
        if isUTurn { return (.continue, .uturn) }
        let modifier = RouteStep.Modifier(turnAngle: angle)
        // Names compare by index: each is held once, and 0 is no name.
        let name = to.name
        if name == 0, abs(angle) < 25, currentName != 0 { return nil }
        if name != currentName { return (abs(angle) < 25 ? .newName : .turn, modifier) }
        // Same street: a maneuver only where it bends at a junction that offers another way on.
        let via = Int(from.to), back = from.from
        guard abs(angle) >= 45 else { return nil }
        var choices = 0
        for departure in Int(graph.nodeFirstDeparture[via])..<Int(graph.nodeFirstDeparture[via + 1])
        where network.edgeTo[Int(graph.nodeDepartures[departure])] != back {
            choices += 1
        }
        return choices > 1 ? (.continue, modifier) : nil
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
