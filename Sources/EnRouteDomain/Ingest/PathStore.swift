public import Foundation

/// One kept fix on a trip's path, as stored for pricing and disputes.
public struct PathPoint: Sendable, Equatable, Codable {
    public let tripId: String
    public let providerId: String
    public let lat: Double
    public let lng: Double
    public let heading: Double
    public let speed: Double
    public let accuracy: Double
    /// The device's time for the fix.
    public let recordedAt: Date
    /// The server's time when it kept the fix.
    public let receivedAt: Date

    public init(
        tripId: String, providerId: String, lat: Double, lng: Double, heading: Double, speed: Double, accuracy: Double,
        recordedAt: Date, receivedAt: Date
    ) {
        self.tripId = tripId; self.providerId = providerId; self.lat = lat; self.lng = lng; self.heading = heading
        self.speed = speed; self.accuracy = accuracy; self.recordedAt = recordedAt; self.receivedAt = receivedAt
    }
}

/// The durable path of every trip (the full path is stored); pricing reads it.
public protocol PathStore: Sendable {
    /// Stores `points` durably before returning; a point already stored for its trip and time is ignored.
    func append(_ points: [PathPoint]) async throws
    /// A trip's path, oldest first.
    func path(tripId: String) async throws -> [PathPoint]
}
