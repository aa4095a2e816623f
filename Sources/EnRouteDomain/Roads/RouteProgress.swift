public import Foundation
public import EnRouteModels

/// A road leg prepared for following: its points with the metres and seconds driven to reach each, so that a
/// position is placed on it (and the time left read off) in a few microseconds, without asking the router.
public struct RouteProgress: Sendable, Equatable {
    /// Where a position lands on the leg.
    public struct Projection: Sendable, Equatable {
        /// The closest point of the leg's polyline.
        public var point: Coordinate
        /// Metres from the position to `point`.
        public var offRouteMeters: Double
        /// Seconds of driving from `point` to the leg's end.
        public var remainingSeconds: Double
        /// Metres of road from `point` to the leg's end.
        public var remainingMeters: Double
        /// The segment `point` lies on (index of its first vertex).
        public var segment: Int
    }

    /// The leg as routed.
    public let leg: RoadLeg
    /// Per vertex of `leg.geometry`: metres along the polyline from its start.
    public let cumulativeMeters: [Double]
    /// Per vertex: seconds of driving from the start (from the steps' own speeds, scaled to the leg's duration).
    public let cumulativeSeconds: [Double]

    /// Prepares `leg` for following.
    public init(_ leg: RoadLeg) {
        self.leg = leg
        let points = leg.geometry
        var metres = [0.0]
        metres.reserveCapacity(points.count)
        for i in points.indices.dropFirst() { metres.append(metres[i - 1] + Self.distance(points[i - 1], points[i])) }
        cumulativeMeters = metres
        let length = metres.last ?? 0
        // The steps say how fast each part is driven: seconds as a piecewise-linear function of metres.
        var knots: [(metres: Double, seconds: Double)] = [(0, 0)]
        let stepMetres = leg.steps.reduce(0) { $0 + $1.distanceMeters }
        let scaleM = stepMetres > 0 ? length / stepMetres : 0
        for step in leg.steps where step.distanceMeters > 0 {
            let last = knots[knots.count - 1]
            knots.append((last.metres + step.distanceMeters * scaleM, last.seconds + step.durationSeconds))
        }
        let stepSeconds = knots.last?.seconds ?? 0
        let scaleS = stepSeconds > 0 ? leg.durationSeconds / stepSeconds : 0
        var seconds: [Double] = []
        seconds.reserveCapacity(points.count)
        var k = 0
        for m in metres {
            if knots.count < 2 || length <= 0 {
                seconds.append(length > 0 ? leg.durationSeconds * m / length : 0)
                continue
            }
            while k + 1 < knots.count - 1, knots[k + 1].metres < m { k += 1 }
            let a = knots[k], b = knots[min(k + 1, knots.count - 1)]
            let t = b.metres > a.metres ? min(1, max(0, (m - a.metres) / (b.metres - a.metres))) : 1
            seconds.append((a.seconds + t * (b.seconds - a.seconds)) * scaleS)
        }
        cumulativeSeconds = seconds
    }

    /// Seconds of the whole leg.
    public var durationSeconds: Double { leg.durationSeconds }

    /// Places `position` on the leg, searching from segment `from` on (a driver moves forward; the search may
    /// look `lookBack` segments behind it for a fix that jittered back).
    public func project(_ position: Coordinate, from: Int = 0, lookBack: Int = 2) -> Projection? {
        let points = leg.geometry
        guard let first = points.first else { return nil }
        guard points.count > 1 else {
            return Projection(
                point: first, offRouteMeters: Self.distance(position, first), remainingSeconds: 0, remainingMeters: 0,
                segment: 0)
        }
        // A local plane around the position, in metres.
        let rad = Double.pi / 180, r = 6_371_000.0
        let kx = cos(position.lat * rad) * rad * r, ky = rad * r
        func xy(_ c: Coordinate) -> (Double, Double) { ((c.lng - position.lng) * kx, (c.lat - position.lat) * ky) }
        var best: (d2: Double, segment: Int, t: Double) = (.infinity, 0, 0)
        let start = max(0, min(from, points.count - 2) - lookBack)
        var a = xy(points[start])
        for i in start..<(points.count - 1) {
            let b = xy(points[i + 1])
            let dx = b.0 - a.0, dy = b.1 - a.1
            let len2 = dx * dx + dy * dy
            let t = len2 > 0 ? min(1, max(0, -(a.0 * dx + a.1 * dy) / len2)) : 0
            let px = a.0 + t * dx, py = a.1 + t * dy
            let d2 = px * px + py * py
            if d2 < best.d2 { best = (d2, i, t) }
            a = b
        }
        let i = best.segment, t = best.t
        let p = points[i], q = points[i + 1]
        let point = Coordinate(lat: p.lat + (q.lat - p.lat) * t, lng: p.lng + (q.lng - p.lng) * t)
        let doneSeconds = cumulativeSeconds[i] + (cumulativeSeconds[i + 1] - cumulativeSeconds[i]) * t
        let doneMeters = cumulativeMeters[i] + (cumulativeMeters[i + 1] - cumulativeMeters[i]) * t
        return Projection(
            point: point, offRouteMeters: best.d2.squareRoot(),
            remainingSeconds: max(0, leg.durationSeconds - doneSeconds),
            remainingMeters: max(0, (cumulativeMeters.last ?? 0) - doneMeters), segment: i)
    }

    /// Metres between two points on a sphere of the Earth's mean radius.
    static func distance(_ a: Coordinate, _ b: Coordinate) -> Double { StraightLineEstimator.distance(a, b) }
}
