public import EnRouteModels

/// Where a renderer draws the driver's marker at one moment.
public struct MarkerFrame: Equatable, Sendable {
    /// The interpolated position.
    public var coordinate: Coordinate
    /// Degrees clockwise from north, in 0..<360.
    public var heading: Double
    /// True while the marker is still moving towards the latest position.
    public var isAnimating: Bool

    /// A frame at `coordinate`, pointing at `heading`.
    public init(coordinate: Coordinate, heading: Double, isAnimating: Bool) {
        self.coordinate = coordinate; self.heading = heading; self.isAnimating = isAnimating
    }
}
