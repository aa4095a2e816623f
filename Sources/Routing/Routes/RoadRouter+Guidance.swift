/// Guidance: the maneuvers along a route's pieces, as OSRM words them.
extension RoadRouter {
    /// The steps as they are built: those finished, the one under way with its street and weight so far, and on a
    /// roundabout the exits passed and the heading it was entered with.
    struct StepList {
        var finished: [RouteStep] = []
        var current: RouteStep
        var currentName: Int32
        var weight = 0
        var roundabout: (exits: Int, entryBearing: Double)?
    }

    /// A depart step, a step wherever the driver turns or the street changes name (a roundabout is one step and
    /// leaving it another), and an arrive step.
    func makeSteps(pieces: [Piece], start: EdgeSnap, end: EdgeSnap) -> [RouteStep] {
        let guides = network.guides
        var steps = StepList(
            current: RouteStep(
                type: .depart, modifier: nil, name: network.name(ofEdge: pieces[0].edge), distanceMeters: 0,
                durationSeconds: 0, location: start.coordinate, bearingBefore: 0, bearingAfter: start.bearing,
                geometry: []),
            currentName: guides[Int(pieces[0].edge)].name)
        add(pieces[0], to: &steps)
        for (previous, piece) in zip(pieces, pieces.dropFirst()) {
            switch (guides[Int(previous.edge)].isRoundabout, guides[Int(piece.edge)].isRoundabout) {
            case (false, true):
                // Entering: one step for the whole roundabout, named and aimed by the way out once it is known.
                startStep(.roundabout, nil, from: previous, onto: piece, in: &steps)
                steps.roundabout = (0, guides[Int(previous.edge)].endBearing)
            case (true, true):
                // Going round: every node passed that offers a way off is an exit passed.
                if offersWayOff(at: guides[Int(previous.edge)].to) { steps.roundabout?.exits += 1 }
            case (true, false):
                leaveRoundabout(from: previous, onto: piece, in: &steps)
            case (false, false):
                if let (type, modifier) = maneuver(
                    from: guides[Int(previous.edge)], to: guides[Int(piece.edge)], currentName: steps.currentName)
                {
                    startStep(type, modifier, from: previous, onto: piece, in: &steps)
                }
            }
            add(piece, to: &steps)
        }
        steps.current.durationSeconds = EdgeBasedGraph.seconds(ofWeight: steps.weight)
        steps.finished.append(steps.current)
        steps.finished.append(
            RouteStep(
                type: .arrive, modifier: nil, name: network.name(ofEdge: end.edge), distanceMeters: 0,
                durationSeconds: 0,
                location: end.coordinate, bearingBefore: end.bearing, bearingAfter: 0,
                geometry: [end.coordinate, end.coordinate]))
        return steps.finished
    }

    /// Adds a piece's points, metres and weight to the step under way.
    private func add(_ piece: Piece, to steps: inout StepList) {
        append(piece, to: &steps.current.geometry)
        steps.current.distanceMeters += piece.meters
        steps.weight += piece.weight
    }

    /// Finishes the step under way and starts one of `type` where `piece` begins.
    private func startStep(
        _ type: RouteStep.ManeuverType, _ modifier: RouteStep.Modifier?, from previous: Piece, onto piece: Piece,
        in steps: inout StepList
    ) {
        let guides = network.guides
        steps.current.durationSeconds = EdgeBasedGraph.seconds(ofWeight: steps.weight)
        steps.finished.append(steps.current)
        let guide = guides[Int(piece.edge)]
        steps.current = RouteStep(
            type: type, modifier: modifier, name: network.names[Int(guide.name)], distanceMeters: 0,
            durationSeconds: 0, location: network.coordinate(ofNode: guide.from),
            bearingBefore: guides[Int(previous.edge)].endBearing, bearingAfter: guide.startBearing, geometry: [])
        steps.currentName = guide.name
        steps.weight = 0
    }

    /// Whether a node passed on a roundabout offers a way off it.
    private func offersWayOff(at node: Int32) -> Bool {
        let guides = network.guides, via = Int(node)
        return (Int(graph.nodeFirstDeparture[via])..<Int(graph.nodeFirstDeparture[via + 1]))
            .contains { !guides[Int(graph.nodeDepartures[$0])].isRoundabout }
    }

    /// Leaves a roundabout: OSRM numbers the exit on both steps, the roundabout's and the one leaving it.
    private func leaveRoundabout(from previous: Piece, onto piece: Piece, in steps: inout StepList) {
        let guides = network.guides
        let exit = steps.roundabout.map { $0.exits + 1 }
        if let entered = steps.roundabout, steps.current.type == .roundabout {
            steps.current.exit = entered.exits + 1
            steps.current.modifier = RouteStep.Modifier(
                turnAngle: Self.turnAngle(from: entered.entryBearing, to: guides[Int(piece.edge)].startBearing))
            steps.current.name = network.name(ofEdge: piece.edge)
        }
        steps.roundabout = nil
        startStep(
            .exitRoundabout,
            RouteStep.Modifier(
                turnAngle: Self.turnAngle(
                    from: guides[Int(previous.edge)].endBearing,
                    to: guides[Int(piece.edge)].startBearing)),
            from: previous, onto: piece, in: &steps)
        steps.current.exit = exit
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
