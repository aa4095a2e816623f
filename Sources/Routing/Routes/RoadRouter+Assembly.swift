/// Turning a path into a route: its pieces, totals and geometry.
extension RoadRouter {
    /// The weight of the turn `from → to` (the tail edge's weight, the via node's delay and the turn's cost).
    private func turnWeight(from: Int32, to: Int32) -> Int32 {
        for arc in Int(graph.firstArc[Int(from)])..<Int(graph.firstArc[Int(from) + 1]) where graph.arcHead[arc] == to {
            return graph.arcWeight[arc]
        }
        preconditionFailure("a route's consecutive edges must be joined by a turn")
    }

    /// One edge of a route (or the driven part of it at either end): its span as fractions of the edge, metres and
    /// weight.
    struct Piece {
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

    /// The route along `edges` from `start` to `end`: its totals and, in full detail, its geometry and steps.
    func assemble(edges: [Int32], start: EdgeSnap, end: EdgeSnap, weight: Int, detail: RouteDetail) -> RoadRoute {
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
    func append(_ piece: Piece, to points: inout [RoadCoordinate]) {
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
}
