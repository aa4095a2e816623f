import Foundation

/// Matches a path of position fixes onto the road network with a hidden Markov model in the manner of Newson &
/// Krumm (2009), and measures the matched drive.
///
/// Each fix's states are the directed edges within `searchRadiusMeters` (at most `maxCandidates`, nearest
/// first), each at its nearest point, plus the previous fix's likeliest positions (so jitter backwards reads as
/// standing still, not as driving round a block). A state's emission is Gaussian in its great-circle distance
/// from the fix (`sigma`); a transition between states of consecutive fixes is exponential in |driving distance −
/// straight-line distance| (`beta`), the driving distance by a bounded Dijkstra on the turn graph, so one-ways
/// and turn restrictions hold; U-turns and turns add penalties to the difference. Viterbi picks the likeliest
/// sequence. A fix closer than 2σ to the previous kept one is skipped (but the last fix before a break or the
/// end is kept). The path breaks, and matching starts again, where a fix has no road within the radius, where
/// fixes fall silent for more than `maxGapSeconds` or jump more than `maxGapMeters`, or where no route within
/// `maxDetourMeters` of the straight line joins them; each break is reported, never bridged.
public struct MapMatcher: Sendable {
    /// The model's parameters.
    public struct Options: Sendable {
        /// Standard deviation of the fixes' position error in metres (the emission's σ).
        public var sigmaMeters: Double
        /// The transition's scale in metres: how much driving distance may differ from the straight line.
        public var betaMeters: Double
        /// Roads further than this from a fix are not its candidates.
        public var searchRadiusMeters: Double
        /// At most this many candidate edges per fix, nearest first.
        public var maxCandidates: Int
        /// A transition's driving distance may exceed the straight line by at most this many metres.
        public var maxDetourMeters: Double
        /// Fixes falling silent for longer than this break the path.
        public var maxGapSeconds: Double
        /// Consecutive kept fixes further apart in a straight line than this break the path.
        public var maxGapMeters: Double
        /// A fix projected up to this far behind the previous one on the same edge has not moved (noise along the
        /// road).
        public var backtrackMeters: Double
        /// Metres added to a transition's difference for each U-turn at a node, so noise along a two-way street is
        /// not read as driving to the next junction and back.
        public var uTurnPenaltyMeters: Double
        /// Metres added for each turn at a node, times its angle over 180°, so jitter round a small loop of short
        /// junction edges is not read as driving round it.
        public var turnPenaltyMeters: Double

        /// Options with the given parameters; `backtrackMeters` defaults to 2σ.
        public init(
            sigmaMeters: Double = 5, betaMeters: Double = 5, searchRadiusMeters: Double = 50, maxCandidates: Int = 20,
            maxDetourMeters: Double = 300, maxGapSeconds: Double = 60, maxGapMeters: Double = 1000,
            backtrackMeters: Double? = nil, uTurnPenaltyMeters: Double = 100,
            turnPenaltyMeters: Double = 40
        ) {
            self.sigmaMeters = sigmaMeters
            self.betaMeters = betaMeters
            self.searchRadiusMeters = searchRadiusMeters
            self.maxCandidates = maxCandidates
            self.maxDetourMeters = maxDetourMeters
            self.maxGapSeconds = maxGapSeconds
            self.maxGapMeters = maxGapMeters
            self.backtrackMeters = backtrackMeters ?? 2 * sigmaMeters
            self.uTurnPenaltyMeters = uTurnPenaltyMeters
            self.turnPenaltyMeters = turnPenaltyMeters
        }
    }

    /// The network matched onto.
    public let network: RoadNetwork
    /// Its turn graph (its weights give the matched duration).
    public let graph: EdgeBasedGraph
    /// The index that finds each fix's candidates.
    public let snapper: EdgeSnapper
    /// The model's parameters.
    public let options: Options

    /// A matcher over prebuilt parts (`graph` and `snapper` built from `network`).
    public init(network: RoadNetwork, graph: EdgeBasedGraph, snapper: EdgeSnapper, options: Options = Options()) {
        self.network = network
        self.graph = graph
        self.snapper = snapper
        self.options = options
    }

    /// A matcher that builds the turn graph and the snapping index from `network`.
    public init(network: RoadNetwork, options: Options = Options()) {
        self.init(
            network: network, graph: EdgeBasedGraph(network: network), snapper: EdgeSnapper(network: network),
            options: options)
    }

    /// One hidden state: a candidate position, its best score and how it was reached.
    struct State {
        var snap: EdgeSnap
        /// Log-probability of the likeliest sequence ending here.
        var score: Double
        /// The state it came from in the previous step, or -1 at a segment's start.
        var previous: Int
        /// The edges from the previous state's edge to this one's, both included (empty at a segment's start).
        var route: [Int32]
    }

    /// One kept fix and its states; `skipped` are the fixes after it dropped for being within 2σ.
    struct Step {
        var fix: Int
        var states: [State]
        var skipped: [Int] = []
    }

    /// Matches `fixes` (in time order) onto the network.
    public func match(_ fixes: [MatchFix]) -> MapMatch {
        let search = MatchRouteSearch(
            network: network, graph: graph, uTurnPenaltyMeters: options.uTurnPenaltyMeters,
            turnPenaltyMeters: options.turnPenaltyMeters)
        var result = MapMatch(segments: [], breaks: [], snapped: Array(repeating: nil, count: fixes.count))
        var steps: [Step] = []
        // A break whose next segment has not started yet.
        var open: MatchBreak?

        /// Ends the current segment at its last fix (kept even if it was within 2σ) and returns that fix's index.
        @discardableResult
        func finish() -> Int? {
            guard !steps.isEmpty else { return nil }
            keepLastSkippedFix(of: &steps, fixes: fixes, search: search)
            let segment = assemble(steps, fixes: fixes, snapped: &result.snapped)
            result.segments.append(segment)
            steps = []
            return segment.lastFix
        }
        func start(_ fix: Int, _ candidates: [EdgeSnap]) {
            if var pending = open {
                pending.firstFixAfter = fix
                result.breaks.append(pending)
                open = nil
            }
            steps = [
                Step(fix: fix, states: candidates.map { State(snap: $0, score: emission($0), previous: -1, route: []) })
            ]
        }
        func split(at fix: Int, _ candidates: [EdgeSnap], reason: MatchBreak.Reason) {
            open = MatchBreak(lastFixBefore: finish(), firstFixAfter: nil, reason: reason)
            start(fix, candidates)
        }

        for (index, fix) in fixes.enumerated() {
            if let last = steps.last,
                RoadNetwork.distance(fix.coordinate, fixes[last.fix].coordinate) < 2 * options.sigmaMeters
            {
                steps[steps.count - 1].skipped.append(index)
                continue
            }
            let candidates = snapper.nearest(
                options.maxCandidates, to: fix.coordinate, maxDistance: options.searchRadiusMeters)
            guard let previous = steps.last else {
                if !candidates.isEmpty { start(index, candidates) }
                continue
            }
            guard !candidates.isEmpty else {
                open = MatchBreak(lastFixBefore: finish(), firstFixAfter: nil, reason: .noCandidates)
                continue
            }
            let straight = RoadNetwork.distance(fix.coordinate, fixes[previous.fix].coordinate)
            // Silence is measured from the last fix heard, skipped or not: waiting at a light is not a gap.
            let heard = previous.skipped.last ?? previous.fix
            if fix.time - fixes[heard].time > options.maxGapSeconds || straight > options.maxGapMeters {
                split(at: index, candidates, reason: .gap)
                continue
            }
            let states = transition(
                from: previous.states, to: candidates + stays(previous.states, fix, candidates),
                straight: straight, search: search)
            if states.contains(where: { $0.score > -.infinity }) {
                steps.append(Step(fix: index, states: states))
            } else {
                split(at: index, candidates, reason: .noRoute)
            }
        }
        finish()
        if let open { result.breaks.append(open) }
        return result
    }

    /// Makes the last step's last skipped fix a step of its own when the model reaches it, so a segment ends at the
    /// last fix heard.
    private func keepLastSkippedFix(of steps: inout [Step], fixes: [MatchFix], search: MatchRouteSearch) {
        guard let last = steps.last, let tail = last.skipped.last else { return }
        let candidates = snapper.nearest(
            options.maxCandidates, to: fixes[tail].coordinate, maxDistance: options.searchRadiusMeters)
        let straight = RoadNetwork.distance(fixes[tail].coordinate, fixes[last.fix].coordinate)
        let states = transition(
            from: last.states, to: candidates + stays(last.states, fixes[tail], candidates), straight: straight,
            search: search)
        if states.contains(where: { $0.score > -.infinity }) {
            steps[steps.count - 1].skipped.removeLast()
            steps.append(Step(fix: tail, states: states))
        }
    }

    // MARK: - The model

    private func emission(_ snap: EdgeSnap) -> Double {
        let z = snap.distanceMeters / options.sigmaMeters
        return -0.5 * z * z
    }

    /// The likeliest previous positions again, as candidates for `fix`: a vehicle that has hardly moved while its
    /// fixes jittered backwards (over a junction, or against a one-way) stays where it was instead of driving round.
    private func stays(_ previous: [State], _ fix: MatchFix, _ candidates: [EdgeSnap]) -> [EdgeSnap] {
        let likeliest = previous.filter { $0.score > -.infinity }.sorted { $0.score > $1.score }.prefix(Self.stayCount)
        var stays: [EdgeSnap] = []
        for state in likeliest {
            var snap = state.snap
            snap.distanceMeters = RoadNetwork.distance(fix.coordinate, snap.coordinate)
            guard snap.distanceMeters <= options.searchRadiusMeters,
                !(candidates + stays).contains(where: {
                    $0.edge == snap.edge && abs($0.metersAlongEdge - snap.metersAlongEdge) < 1
                })
            else { continue }
            stays.append(snap)
        }
        return stays
    }

    /// How many of the previous step's likeliest positions are offered again as staying put.
    static let stayCount = 3

    /// The next step's states with their best scores over every predecessor (-∞ where none reaches them).
    private func transition(
        from previous: [State], to candidates: [EdgeSnap], straight: Double, search: MatchRouteSearch
    ) -> [State] {
        var states = candidates.map { State(snap: $0, score: -.infinity, previous: -1, route: []) }
        let bound = straight + options.maxDetourMeters
        for (from, state) in previous.enumerated() where state.score > -.infinity {
            let routes = search.routes(
                from: state.snap, to: candidates, boundMeters: bound, backtrackMeters: options.backtrackMeters)
            for (to, route) in routes.enumerated() {
                guard let route else { continue }
                let difference = abs(route.meters - straight) + route.penaltyMeters
                let score = state.score - difference / options.betaMeters + emission(candidates[to])
                if score > states[to].score {
                    states[to].score = score
                    states[to].previous = from
                    states[to].route = route.edges
                }
            }
        }
        // Keep the scores near zero over long paths.
        if let best = states.map(\.score).max(), best > -.infinity {
            for index in states.indices { states[index].score -= best }
        }
        return states
    }

    // MARK: - The matched path

    /// The likeliest sequence through `steps` as a segment; records the fixes' snapped positions.
    private func assemble(_ steps: [Step], fixes: [MatchFix], snapped: inout [EdgeSnap?]) -> MatchedSegment {
        let chain = likeliestChain(through: steps)
        let path = MatchedPath(chain: chain, network: network)
        let edges = path.edges
        let distance = path.along[path.along.count - 1]
        let lastEdge = Int(edges[edges.count - 1])
        let startFraction = fraction(path.startAlong, of: Int(edges[0]))
        let endFraction = fraction(distance + path.startAlong - path.offsets[path.offsets.count - 1], of: lastEdge)
        let times = steps.map { fixes[$0.fix].time }
        recordSnaps(of: steps, chain: chain, path: path, fixes: fixes, into: &snapped)
        return MatchedSegment(
            firstFix: steps[0].fix, lastFix: steps[steps.count - 1].fix, edges: edges,
            geometry: geometry(of: edges, from: startFraction, to: endFraction), distanceMeters: distance,
            durationSeconds: weight(of: edges, from: startFraction, to: endFraction)
                .truncatingRemainder(dividingBy: Double(EdgeBasedGraph.destinationEntryWeight)) / 10,
            traversals: traversals(of: path, times: times))
    }

    /// The likeliest state of each step, traced back from the best last one.
    private func likeliestChain(through steps: [Step]) -> [State] {
        var chain = [State](repeating: steps[0].states[0], count: steps.count)
        var at = steps[steps.count - 1].states.indices.max {
            steps[steps.count - 1].states[$0].score < steps[steps.count - 1].states[$1].score
        }!
        for step in steps.indices.reversed() {
            chain[step] = steps[step].states[at]
            at = chain[step].previous
        }
        return chain
    }

    /// A chain's edges in order, each state's index among them, and each state's metres from the segment's start.
    private struct MatchedPath {
        var edges: [Int32]
        /// Metres from the first edge's tail to each edge's tail.
        var offsets: [Double]
        /// Each state's edge, as an index into `edges`.
        var edgeIndex: [Int]
        /// Each state's metres from the segment's start, never decreasing.
        var along: [Double]
        /// The first state's metres along its edge.
        var startAlong: Double

        init(chain: [State], network: RoadNetwork) {
            startAlong = chain[0].snap.metersAlongEdge
            edges = [chain[0].snap.edge]
            offsets = [0.0]
            edgeIndex = [0]
            along = [0.0]
            for state in chain.dropFirst() {
                for edge in state.route.dropFirst() {
                    offsets.append(offsets[offsets.count - 1] + network.edgeLengthMeters[Int(edges[edges.count - 1])])
                    edges.append(edge)
                }
                edgeIndex.append(edges.count - 1)
                along.append(
                    max(along[along.count - 1], offsets[offsets.count - 1] + state.snap.metersAlongEdge - startAlong))
            }
        }
    }

    /// The points along `edges`, the first and last cut at their fractions.
    private func geometry(of edges: [Int32], from startFraction: Double, to endFraction: Double) -> [RoadCoordinate] {
        var geometry: [RoadCoordinate] = []
        for (index, edge) in edges.enumerated() {
            let from = index == 0 ? startFraction : 0
            let to = index == edges.count - 1 ? max(from, endFraction) : 1
            let piece =
                from == 0 && to == 1 ? network.geometry(ofEdge: edge) : network.slice(ofEdge: edge, from: from, to: to)
            geometry += geometry.isEmpty ? piece : Array(piece.dropFirst())
        }
        return geometry
    }

    /// Deciseconds as the router counts them: whole turns between edges, the driven parts of the end edges.
    private func weight(of edges: [Int32], from startFraction: Double, to endFraction: Double) -> Double {
        let lastEdge = Int(edges[edges.count - 1])
        if edges.count == 1 {
            return (max(startFraction, endFraction) - startFraction) * Double(graph.edgeWeight[lastEdge])
        }
        var weight =
            endFraction * Double(graph.edgeWeight[lastEdge]) - startFraction * Double(graph.edgeWeight[Int(edges[0])])
        for (from, to) in zip(edges, edges.dropFirst()) { weight += Double(turnWeight(from: from, to: to)) }
        return weight
    }

    /// Each fully driven edge's entry and exit, from the times at the segment's kept fixes by metres along it.
    private func traversals(of path: MatchedPath, times: [Double]) -> [EdgeTraversal] {
        let along = path.along, edges = path.edges
        func time(atMeters meters: Double) -> Double {
            var upper = 0
            while upper < along.count - 1, along[upper] < meters { upper += 1 }
            guard upper > 0, along[upper] > along[upper - 1] else { return times[upper] }
            let t = (meters - along[upper - 1]) / (along[upper] - along[upper - 1])
            return times[upper - 1] + t * (times[upper] - times[upper - 1])
        }
        var traversals: [EdgeTraversal] = []
        if edges.count > 2 {
            for index in 1..<(edges.count - 1) {
                let enter = path.offsets[index] - path.startAlong
                let leave = enter + network.edgeLengthMeters[Int(edges[index])]
                traversals.append(
                    EdgeTraversal(edge: edges[index], enteredAt: time(atMeters: enter), leftAt: time(atMeters: leave)))
            }
        }
        return traversals
    }

    /// Records each kept fix at its state, and each skipped fix on the path near it (at its step's state if none is).
    private func recordSnaps(
        of steps: [Step], chain: [State], path: MatchedPath, fixes: [MatchFix], into snapped: inout [EdgeSnap?]
    ) {
        for (step, state) in zip(steps, chain) { snapped[step.fix] = state.snap }
        for (position, step) in steps.enumerated() where !step.skipped.isEmpty {
            let until = position + 1 < steps.count ? path.edgeIndex[position + 1] : path.edgeIndex[position]
            let nearby = Set(path.edges[path.edgeIndex[position]...until])
            for fix in step.skipped {
                let onPath = snapper.candidates(near: fixes[fix].coordinate, maxDistance: options.searchRadiusMeters)
                    .first { nearby.contains($0.edge) }
                snapped[fix] = onPath ?? chain[position].snap
            }
        }
    }

    private func fraction(_ meters: Double, of edge: Int) -> Double {
        let length = network.edgeLengthMeters[edge]
        return length > 0 ? min(1, max(0, meters / length)) : 0
    }

    /// The turn graph's weight for `from → to`: the tail edge's weight, the via node's delay and the turn's cost.
    private func turnWeight(from: Int32, to: Int32) -> Int32 {
        for arc in Int(graph.firstArc[Int(from)])..<Int(graph.firstArc[Int(from) + 1]) where graph.arcHead[arc] == to {
            return graph.arcWeight[arc]
        }
        preconditionFailure("a matched path's consecutive edges must be joined by a turn")
    }
}
