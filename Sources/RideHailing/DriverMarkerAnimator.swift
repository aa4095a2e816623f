public import EnRouteModels

/// Moves the driver's marker between reported positions, independent of any UI toolkit.
///
/// Updates with a `seq` at or below the last one are ignored. After more than 10 s without an update the
/// marker jumps; otherwise it moves linearly over 2.5 s from wherever it is drawn now, turning the short way.
public struct DriverMarkerAnimator: Sendable {
    /// What `handle(_:)` did with a location.
    public enum Outcome: Equatable, Sendable {
        /// The update was not newer than the last one.
        case ignored
        /// The marker was placed at once: the first fix, or the first after a long gap.
        case jumped
        /// The marker started moving towards the new position.
        case animating
    }

    /// Longer than this without an update and the marker jumps instead of crossing the city.
    public static let jumpGap: Duration = .seconds(10)
    /// How long the marker takes to reach a new position.
    public static let animationDuration: Duration = .milliseconds(2500)

    private struct Segment: Sendable {
        var from: MarkerFrame
        var to: DriverLocation
        var start: Duration
        var duration: Duration
    }

    private let elapsed: @Sendable () -> Duration
    private var lastSeq: Int64 = .min
    private var lastUpdate: Duration?
    private var segment: Segment?

    /// An animator that reads time from `clock`; `frame(at:)` takes times on the same clock, counted from now. The
    /// rider app's `DriverMarkerAnimator()` runs on the continuous clock.
    public init(clock: any Clock<Duration> = ContinuousClock()) {
        elapsed = Self.stopwatch(clock)
    }

    /// The current time on the injected clock, counted from when the animator was made.
    public var now: Duration { elapsed() }

    /// The latest accepted location, if any.
    public var target: DriverLocation? { segment?.to }

    /// Takes a new reported location and starts the move towards it.
    @discardableResult
    public mutating func handle(_ location: DriverLocation) -> Outcome {
        guard location.seq > lastSeq else { return .ignored }
        lastSeq = location.seq
        let now = elapsed()
        defer { lastUpdate = now }
        guard let lastUpdate, now - lastUpdate <= Self.jumpGap, let current = frame(at: now) else {
            let placed = MarkerFrame(
                coordinate: location.coordinate, heading: Self.normalized(location.heading), isAnimating: false)
            segment = Segment(from: placed, to: location, start: now, duration: .zero)
            return .jumped
        }
        segment = Segment(from: current, to: location, start: now, duration: Self.animationDuration)
        return .animating
    }

    /// The marker as it should be drawn now.
    public func frame() -> MarkerFrame? { frame(at: elapsed()) }

    /// The marker at `time` (see `now`); nil before the first location.
    public func frame(at time: Duration) -> MarkerFrame? {
        guard let segment else { return nil }
        let progress = segment.duration <= .zero ? 1 : min(1, max(0, (time - segment.start) / segment.duration))
        let from = segment.from, to = segment.to
        let lat = from.coordinate.lat + (to.coordinate.lat - from.coordinate.lat) * progress
        let lng = from.coordinate.lng + (to.coordinate.lng - from.coordinate.lng) * progress
        let turn = Self.shortestTurn(from: from.heading, to: to.heading)
        return MarkerFrame(
            coordinate: Coordinate(lat: lat, lng: lng),
            heading: Self.normalized(from.heading + turn * progress),
            isAnimating: progress < 1)
    }

    /// The interpolated position at `time`.
    public func position(at time: Duration) -> Coordinate? { frame(at: time)?.coordinate }

    /// The interpolated heading at `time`, in degrees 0..<360.
    public func heading(at time: Duration) -> Double? { frame(at: time)?.heading }

    /// The signed turn in degrees, in -180...180, that goes from `a` to `b` the short way round.
    static func shortestTurn(from a: Double, to b: Double) -> Double {
        let delta = (b - a).truncatingRemainder(dividingBy: 360)
        if delta > 180 { return delta - 360 }
        if delta < -180 { return delta + 360 }
        return delta
    }

    static func normalized(_ degrees: Double) -> Double {
        let value = degrees.truncatingRemainder(dividingBy: 360)
        return value < 0 ? value + 360 : value
    }

    private static func stopwatch<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }
}
