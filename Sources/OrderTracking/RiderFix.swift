public import Foundation
public import EnRouteModels

/// One reported rider position, with the time her phone took it.
public struct RiderFix: Equatable, Sendable {
    public let coordinate: Coordinate
    public let recordedAt: Date
    /// Shown on the Live Activity ("Ana is on the way"); nil when unknown.
    public let firstName: String?

    /// A fix at `coordinate`, taken at `recordedAt`.
    public init(coordinate: Coordinate, recordedAt: Date, firstName: String? = nil) {
        self.coordinate = coordinate; self.recordedAt = recordedAt; self.firstName = firstName
    }
}
