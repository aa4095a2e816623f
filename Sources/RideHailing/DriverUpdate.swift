public import EnRouteModels

/// One driver position on the way to the pickup.
public struct DriverUpdate: Sendable, Equatable {
    /// Grows with each update of one ride; an ETA for a higher sequence is newer.
    public let sequence: Int
    /// The driver's position.
    public let position: Coordinate
    /// The driver's distance to the pickup.
    public let metersAway: Int
    /// The server's ETA for this update, when the feed carries one.
    public let reportedETA: Duration?

    /// An update; `reportedETA` only when the feed carries one.
    public init(sequence: Int, position: Coordinate, metersAway: Int, reportedETA: Duration? = nil) {
        self.sequence = sequence; self.position = position; self.metersAway = metersAway; self.reportedETA = reportedETA
    }
}
