public import Foundation
public import EnRouteModels

/// Turn-by-turn guidance along a `ProviderRoute`, fed the phone's successive positions: pure, no I/O.
///
/// Each position is placed on the route line (never moving backwards along it) to give the next maneuver, the
/// distance to it, the distance and time left, and arrival. A position more than `Rules.offRouteMeters` from the
/// line for `Rules.offRouteFixes` positions in a row asks for a new route (`Action.reroute`); the owner fetches it
/// and answers with `rerouted(_:)` or `rerouteFailed(at:)`. Requests are throttled: at most one in flight, none
/// sooner than `Rules.rerouteInterval` after the last, and that pause doubles after each failure (up to
/// `Rules.maximumRerouteInterval`), so a lost GPS or a down server is not hammered. Positions whose accuracy is
/// worse than `Rules.worstAccuracy` move nothing: a phone that has lost its fix is not off the route.
public struct Guidance: Sendable, Equatable {
    /// The thresholds guidance works by.
    public struct Rules: Sendable, Equatable {
        /// Distance from the route line beyond which a position is off the route, metres.
        public var offRouteMeters: Double = 50
        /// Consecutive off-route positions that ask for a new route.
        public var offRouteFixes = 2
        /// Distance left (or from the stop) within which the provider has arrived, metres.
        public var arrivalMeters: Double = 30
        /// Positions less accurate than this (metres) are ignored.
        public var worstAccuracy: Double = 50
        /// The shortest pause between two route requests, seconds.
        public var rerouteInterval: TimeInterval = 15
        /// The longest pause after repeated failures, seconds.
        public var maximumRerouteInterval: TimeInterval = 120

        /// The default rules.
        public init() {}
    }

    /// What the owner does after a position.
    public enum Action: Sendable, Equatable {
        /// Nothing to do.
        case none
        /// Fetch a new route from this position (the provider left the route).
        case reroute(from: Coordinate, heading: Double?)
        /// The provider has just reached the stop (reported once).
        case arrived
    }

    /// What the guidance screen shows now.
    public struct Progress: Sendable, Equatable {
        /// The next maneuver ahead (`arrive` at the end); nil on an empty route.
        public var nextManeuver: RouteManeuver?
        /// Metres along the route to the next maneuver.
        public var distanceToManeuver: Double
        /// Metres along the route to the stop.
        public var remainingMeters: Double
        /// Seconds to the stop at the route's speeds.
        public var remainingSeconds: Double
        /// Metres from the last position to the route line.
        public var offRouteMeters: Double
        /// True once the provider has reached the stop.
        public var arrived: Bool
        /// The instruction, as "In 120 m, turn left onto Mannerheimintie".
        public var instruction: String
    }

    /// The thresholds in use.
    public let rules: Rules
    /// The route being followed.
    public private(set) var route: ProviderRoute
    /// The guidance for the last position (or the route's start before any).
    public private(set) var progress: Progress

    private var line: [Coordinate] = []
    private var cumulative: [Double] = [0]
    private var maneuverAlong: [Double] = []
    private var segment = 0
    private var along = 0.0
    private var offRouteCount = 0
    private var lastRequestAt: Date?
    private var failures = 0
    private var requestInFlight = false

    /// Guidance along `route`, from its start.
    public init(route: ProviderRoute, rules: Rules = Rules()) {
        self.rules = rules
        self.route = route
        self.progress = Progress(
            nextManeuver: nil, distanceToManeuver: 0, remainingMeters: 0, remainingSeconds: 0,
            offRouteMeters: 0, arrived: false, instruction: "")
        load(route)
    }

    /// True while a route request asked for by `reroute` has not been answered.
    public var isRerouting: Bool { requestInFlight }

    /// Places `position` on the route and says what to do next.
    public mutating func update(position: Coordinate, heading: Double?, accuracy: Double, at time: Date) -> Action {
        guard accuracy.isFinite, accuracy <= rules.worstAccuracy, !line.isEmpty else { return .none }
        let wasArrived = progress.arrived
        let (index, fraction, offset) = nearest(position, from: max(0, segment - 1))
        progress.offRouteMeters = offset
        if offset <= rules.offRouteMeters {
            offRouteCount = 0
            let candidate = cumulative[index] + fraction * (cumulative[index + 1] - cumulative[index])
            if candidate >= along { segment = index; along = candidate }
        } else {
            offRouteCount += 1
        }
        refresh()
        if !progress.arrived,
            (progress.remainingMeters <= rules.arrivalMeters && offset <= rules.offRouteMeters)
                || position.distance(to: route.to) <= rules.arrivalMeters
        {
            progress.arrived = true
            progress.instruction = Self.arrivalText(route.stop)
        }
        if progress.arrived { return wasArrived ? .none : .arrived }
        if offRouteCount >= rules.offRouteFixes, mayRequest(at: time) {
            requestInFlight = true
            lastRequestAt = time
            return .reroute(from: position, heading: heading)
        }
        return .none
    }

    /// Follows `route` from its start (the answer to `reroute`, or a route for the trip's next stop).
    public mutating func rerouted(_ route: ProviderRoute) {
        requestInFlight = false
        failures = 0
        offRouteCount = 0
        self.route = route
        progress.arrived = false
        progress.offRouteMeters = 0
        load(route)
    }

    /// The route request failed: the next one waits twice as long.
    public mutating func rerouteFailed(at time: Date) {
        requestInFlight = false
        failures += 1
        lastRequestAt = time
    }

    /// When the next route request may go out after one at `time`: `rerouteInterval`, doubled per failure.
    func mayRequest(at time: Date) -> Bool {
        guard !requestInFlight else { return false }
        guard let last = lastRequestAt else { return true }
        let pause = min(rules.maximumRerouteInterval, rules.rerouteInterval * pow(2, Double(failures)))
        return time.timeIntervalSince(last) >= pause
    }

    // MARK: - Geometry

    private mutating func load(_ route: ProviderRoute) {
        line = route.geometry
        cumulative = [0]
        for (a, b) in zip(line, line.dropFirst()) {
            cumulative.append(cumulative[cumulative.count - 1] + a.distance(to: b))
        }
        // Each maneuver's place along the line, searched forwards from the previous one so a loop cannot reorder them.
        maneuverAlong = []
        var from = 0
        for step in route.steps {
            guard line.count > 1 else { maneuverAlong.append(0); continue }
            let (index, fraction, _) = nearest(step.location, from: from)
            from = index
            maneuverAlong.append(cumulative[index] + fraction * (cumulative[index + 1] - cumulative[index]))
        }
        segment = 0
        along = 0
        refresh()
    }

    /// The segment of `line` nearest `point` at or after segment `from`, the fraction along it, and the distance.
    private func nearest(_ point: Coordinate, from: Int) -> (Int, Double, Double) {
        guard line.count > 1 else { return (0, 0, line.first.map { $0.distance(to: point) } ?? .infinity) }
        var best = (0, 0.0, Double.infinity)
        for i in min(from, line.count - 2)..<(line.count - 1) {
            let (fraction, distance) = Self.project(point, line[i], line[i + 1])
            if distance < best.2 { best = (i, fraction, distance) }
        }
        return best
    }

    /// Where `p` falls on segment `a`–`b`: the fraction along it (0...1) and the distance in metres (flat-earth).
    static func project(_ p: Coordinate, _ a: Coordinate, _ b: Coordinate) -> (Double, Double) {
        let k = cos(p.lat * .pi / 180)
        let ax = (a.lng - p.lng) * 111_320 * k, ay = (a.lat - p.lat) * 110_540
        let bx = (b.lng - p.lng) * 111_320 * k, by = (b.lat - p.lat) * 110_540
        let dx = bx - ax, dy = by - ay, length = dx * dx + dy * dy
        let t = length > 0 ? max(0, min(1, -(ax * dx + ay * dy) / length)) : 0
        return (t, hypot(ax + t * dx, ay + t * dy))
    }

    private mutating func refresh() {
        let total = cumulative[cumulative.count - 1]
        let remaining = max(0, total - along)
        progress.remainingMeters = remaining
        progress.remainingSeconds = total > 0 ? route.durationSeconds * remaining / total : 0
        // The first maneuver ahead; `depart` is behind the driver once they move.
        let ahead =
            route.steps.indices.first { $0 > 0 && maneuverAlong[$0] > along + 1 }
            ?? (route.steps.isEmpty ? nil : route.steps.count - 1)
        progress.nextManeuver = ahead.map { route.steps[$0] }
        progress.distanceToManeuver = ahead.map { max(0, maneuverAlong[$0] - along) } ?? 0
        progress.instruction =
            progress.arrived
            ? Self.arrivalText(route.stop)
            : progress.nextManeuver.map { Self.instruction($0, in: progress.distanceToManeuver, stop: route.stop) }
                ?? ""
    }

    // MARK: - Words

    /// "In 120 m, turn left onto Mannerheimintie"; "Now, …" within 10 m.
    public static func instruction(_ maneuver: RouteManeuver, in metres: Double, stop: RouteStop) -> String {
        let when = metres < 10 ? "Now" : "In \(distanceText(metres))"
        return "\(when), \(action(maneuver, stop: stop))"
    }

    /// The maneuver as words: "turn left onto Mannerheimintie", "make a U-turn", "arrive at the pickup".
    public static func action(_ maneuver: RouteManeuver, stop: RouteStop) -> String {
        let onto = maneuver.name.isEmpty ? "" : " onto \(maneuver.name)"
        let modifier = maneuver.modifier ?? "straight"
        switch maneuver.type {
        case "arrive": return "arrive at the \(stop == .pickup ? "pickup" : "destination")"
        case "depart": return "head off" + (maneuver.name.isEmpty ? "" : " on \(maneuver.name)")
        case _ where modifier == "uturn": return "make a U-turn" + onto
        case "new name": return "continue" + onto
        case "continue": return (modifier == "straight" ? "continue straight" : "keep \(modifier)") + onto
        case "roundabout", "rotary", "roundabout turn":
            let exit = maneuver.exit.map { " and take the \(ordinal($0)) exit" } ?? ""
            return "enter the roundabout" + exit + onto
        case "exit roundabout", "exit rotary": return "exit the roundabout" + onto
        case "merge": return "merge \(modifier)" + onto
        case "fork": return "keep \(modifier)" + onto
        case "on ramp", "off ramp": return "take the ramp \(modifier)" + onto
        default: return (modifier == "straight" ? "go straight" : "turn \(modifier)") + onto
        }
    }

    /// "1st", "2nd", "3rd", "4th"… "11th", "12th", "13th", "21st".
    static func ordinal(_ n: Int) -> String {
        let suffix = (11...13).contains(n % 100) ? "th" : [1: "st", 2: "nd", 3: "rd"][n % 10] ?? "th"
        return "\(n)\(suffix)"
    }

    /// "120 m" (to 10 m) below a kilometre, "1.2 km" above.
    public static func distanceText(_ metres: Double) -> String {
        if metres < 1000 { return "\(Int((metres / 10).rounded()) * 10) m" }
        return String(format: "%.1f km", metres / 1000)
    }

    static func arrivalText(_ stop: RouteStop) -> String {
        stop == .pickup ? "You have arrived at the pickup" : "You have arrived at the destination"
    }
}
