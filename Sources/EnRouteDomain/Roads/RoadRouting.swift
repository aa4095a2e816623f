public import Foundation
public import EnRouteModels

/// Why a road query has no answer.
public enum RoadRoutingError: Error, Sendable, Equatable {
    /// The coordinate at this index (sources first, then destinations, for a table) is not near a routable road.
    case noSegment(index: Int)
    /// No road path joins the positions.
    case noRoute
    /// The engine could not answer (an external router down or too slow); the detail says what happened.
    case unavailable(String)
}

/// Where a coordinate lands on the road network.
public struct RoadWaypoint: Sendable, Equatable {
    /// The snapped point on the road.
    public var location: Coordinate
    /// The road's name ("" when unnamed).
    public var name: String
    /// Metres from the given coordinate to the snapped point.
    public var distanceMeters: Double
    /// The road's heading at the snapped point, degrees from north, in the direction of travel.
    public var bearing: Double

    /// A snapped point.
    public init(location: Coordinate, name: String, distanceMeters: Double, bearing: Double) {
        self.location = location; self.name = name; self.distanceMeters = distanceMeters; self.bearing = bearing
    }
}

/// A road route between two snapped points: what the product needs of it.
public struct RoadLeg: Sendable, Equatable {
    /// Metres along the road, snapped start to snapped end.
    public var distanceMeters: Double
    /// Seconds of driving at the speeds the engine used, turn costs and delays included.
    public var durationSeconds: Double
    /// The road's points from the snapped start to the snapped end.
    public var geometry: [Coordinate]
    /// The maneuvers, `depart` first and `arrive` last.
    public var steps: [RouteManeuver]
    /// Where the start landed.
    public var start: RoadWaypoint
    /// Where the end landed.
    public var end: RoadWaypoint
    /// The OSM `highway=*` class the leg spends the most time on ("all" when the engine does not say): the key the
    /// ETA calibration keeps its history by.
    public var roadClass: String

    /// A leg.
    public init(
        distanceMeters: Double, durationSeconds: Double, geometry: [Coordinate], steps: [RouteManeuver],
        start: RoadWaypoint, end: RoadWaypoint, roadClass: String = "all"
    ) {
        self.distanceMeters = distanceMeters; self.durationSeconds = durationSeconds; self.geometry = geometry
        self.steps = steps; self.start = start; self.end = end; self.roadClass = roadClass
    }
}

/// Seconds and metres of the fastest road path between two points.
public struct RoadCost: Sendable, Equatable {
    /// Seconds of driving.
    public var durationSeconds: Double
    /// Metres along the road.
    public var distanceMeters: Double

    /// A cost.
    public init(durationSeconds: Double, distanceMeters: Double) {
        self.durationSeconds = durationSeconds; self.distanceMeters = distanceMeters
    }
}

/// The road network as the product asks it: routes, tables and snapping, answered by EnRoute's own graph or by an
/// external router. `departure` is when the driving starts, for engines that know speeds by time of day.
public protocol RoadRouting: Sendable {
    /// The fastest route from `from` to `to`; `heading` (degrees from north) is the direction the driver faces at the
    /// start.
    func route(
        from: Coordinate, to: Coordinate, heading: Double?, departure: Date
    ) async throws(RoadRoutingError) -> RoadLeg
    /// `route`'s distance, duration and snapped ends without its geometry and steps (empty), for callers that need
    /// only the cost; the totals are the full route's.
    func routeSummary(
        from: Coordinate, to: Coordinate, heading: Double?, departure: Date
    ) async throws(RoadRoutingError) -> RoadLeg
    /// The cost from every source to every destination (`[source][destination]`), nil where no road joins them.
    func table(
        sources: [Coordinate], destinations: [Coordinate], departure: Date
    ) async throws(RoadRoutingError) -> [[RoadCost?]]
    /// Where `coordinate` lands on the nearest routable road (heading-aware when one is given).
    func nearest(_ coordinate: Coordinate, heading: Double?) async throws(RoadRoutingError) -> RoadWaypoint
    /// The road path a recorded track (oldest first) followed, with its length and driving time.
    func match(_ fixes: [RoadFix]) async throws(RoadRoutingError) -> MatchedPath
}

/// One recorded position of a track to match.
public struct RoadFix: Sendable, Equatable {
    public var coordinate: Coordinate
    /// Degrees from north; nil when unknown.
    public var heading: Double?
    public var recordedAt: Date
    /// A position.
    public init(coordinate: Coordinate, heading: Double?, recordedAt: Date) {
        self.coordinate = coordinate; self.heading = heading; self.recordedAt = recordedAt
    }
}

/// A track matched onto the road network.
public struct MatchedPath: Sendable, Equatable {
    /// Metres of road driven.
    public var distanceMeters: Double
    /// Seconds of driving along it at the engine's speeds.
    public var durationSeconds: Double
    /// The fixes that were placed on a road (the rest were dropped as off the network).
    public var matchedFixes: Int
    /// The matched road's points.
    public var geometry: [Coordinate]
    /// A matched path.
    public init(distanceMeters: Double, durationSeconds: Double, matchedFixes: Int, geometry: [Coordinate]) {
        self.distanceMeters = distanceMeters; self.durationSeconds = durationSeconds; self.matchedFixes = matchedFixes;
        self.geometry = geometry
    }
}

extension RoadRouting {
    /// The full route with its geometry and steps dropped, for engines that cannot leave them out.
    public func routeSummary(
        from: Coordinate, to: Coordinate, heading: Double?, departure: Date
    ) async throws(RoadRoutingError) -> RoadLeg {
        try await route(from: from, to: to, heading: heading, departure: departure).summary
    }
}

extension RoadLeg {
    /// The same leg without geometry and steps.
    public var summary: RoadLeg {
        RoadLeg(
            distanceMeters: distanceMeters, durationSeconds: durationSeconds, geometry: [], steps: [], start: start,
            end: end,
            roadClass: roadClass)
    }
}

extension RoadRouting {
    /// Metres between kept fixes: closer ones add noise, not road.
    public static var matchSpacing: Double { 25 }

    /// The default matcher, for engines without one of their own: the fixes thinned to `matchSpacing`, each placed on
    /// the road it faces (heading-aware `nearest`), and the fastest route from each placed fix to the next, summed.
    /// A sub-route more than twice the straight line plus 50 m is taken for a fix placed on the wrong carriageway: the
    /// pair is tried again from the raw positions without headings, the shorter kept; still implausible, the fix is
    /// skipped (up to three in a row, then the straight line counts). Fixes no road is near are dropped. Not an HMM
    /// (Newson & Krumm), which would weigh every candidate road: a stand-in until one is on main.
    public func match(_ fixes: [RoadFix]) async throws(RoadRoutingError) -> MatchedPath {
        var kept: [RoadFix] = []
        for fix in fixes {
            if let last = kept.last, StraightLineEstimator.distance(last.coordinate, fix.coordinate) < Self.matchSpacing
            {
                continue
            }
            kept.append(fix)
        }
        if let last = fixes.last, kept.last != last, kept.count > 0 { kept.append(last) }
        var distance = 0.0, duration = 0.0, matched = 0, skipped = 0
        var geometry: [Coordinate] = []
        // The last fix counted, raw and placed.
        var from: (raw: RoadFix, placed: RoadFix)?
        func plausible(_ leg: RoadLeg, _ straight: Double) -> Bool { leg.distanceMeters <= 2 * straight + 50 }
        for (index, fix) in kept.enumerated() {
            let placed: RoadFix
            do {
                let waypoint = try await nearest(fix.coordinate, heading: fix.heading)
                placed = RoadFix(coordinate: waypoint.location, heading: fix.heading, recordedAt: fix.recordedAt)
            } catch .noSegment {
                continue
            }
            guard let start = from else { from = (fix, placed); matched = 1; continue }
            let straight = StraightLineEstimator.distance(start.placed.coordinate, placed.coordinate)
            var best: RoadLeg?
            for (a, b) in [
                (start.placed, placed),
                (RoadFix(coordinate: start.raw.coordinate, heading: nil, recordedAt: start.raw.recordedAt), fix),
            ] {
                guard
                    let leg = try? await route(
                        from: a.coordinate, to: b.coordinate, heading: a.heading, departure: a.recordedAt)
                else { continue }
                if best.map({ leg.distanceMeters < $0.distanceMeters }) ?? true { best = leg }
                if plausible(leg, straight) { break }
            }
            let last = index == kept.count - 1
            if let leg = best, plausible(leg, straight) {
                distance += leg.distanceMeters
                duration += leg.durationSeconds
                geometry += geometry.isEmpty ? leg.geometry : Array(leg.geometry.dropFirst())
            } else if skipped < 3, !last {
                skipped += 1
                continue
            } else {
                distance += straight
                duration += straight / 8
                geometry.append(placed.coordinate)
            }
            skipped = 0
            matched += 1
            from = (fix, placed)
        }
        guard matched > 1 else { throw .noSegment(index: 0) }
        return MatchedPath(
            distanceMeters: distance, durationSeconds: duration, matchedFixes: matched, geometry: geometry)
    }
}

/// Hears providers' kept fixes, for engines that learn road speeds from them.
public protocol RoadSpeedFeedback: Sendable {
    /// Fixes a provider's device took (oldest first) that the server kept.
    func observe(provider: String, fixes: [LocationFix])
    /// Applies what was observed (and the hour's speeds) every so often on `clock`, until cancelled.
    func run(clock: any Clock<Duration>, now: @escaping @Sendable () -> Date) async
}
