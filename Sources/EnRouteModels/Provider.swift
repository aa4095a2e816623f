public import Foundation

/// One reported position with the time the device took it.
public struct LocationFix: Codable, Sendable, Equatable {
    public let lat: Double
    public let lng: Double
    /// Degrees, 0 = north.
    public let heading: Double
    /// Metres per second.
    public let speed: Double
    /// Horizontal accuracy in metres.
    public let accuracy: Double
    public let recordedAt: Date
    public init(lat: Double, lng: Double, heading: Double, speed: Double, accuracy: Double, recordedAt: Date) {
        self.lat = lat; self.lng = lng; self.heading = heading; self.speed = speed; self.accuracy = accuracy;
        self.recordedAt = recordedAt
    }
    /// The fix's position.
    public var coordinate: Coordinate { Coordinate(lat: lat, lng: lng) }
}

/// `POST /v1/provider/locations` body: a batch of fixes, applied once per batch id.
public struct LocationBatch: Codable, Sendable, Equatable {
    public let batchId: String
    public let fixes: [LocationFix]
    public init(batchId: String, fixes: [LocationFix]) { self.batchId = batchId; self.fixes = fixes }
}

/// `POST /v1/provider/trips/{id}/steps` body (`reportStep`).
public struct StepRequest: Codable, Sendable, Equatable {
    /// Unique per change; a resent change is applied once.
    public let changeId: String
    /// The target state in the trip's own vocabulary (`driverArrived`, `onTheWay`, ...).
    public let step: String
    public let deviceTime: Date
    public let position: Coordinate?
    /// The `delivered` step's proof (its upload's id, `/v1/uploads/{proofId}`); the step is taken while the upload
    /// still runs.
    public let proofId: String?
    public init(changeId: String, step: String, deviceTime: Date, position: Coordinate?, proofId: String? = nil) {
        self.changeId = changeId; self.step = step; self.deviceTime = deviceTime; self.position = position;
        self.proofId = proofId
    }
}

/// `POST /v1/merchant/orders/{id}/accept` body.
public struct MerchantAcceptRequest: Codable, Sendable, Equatable {
    public let preparationMinutes: Int
    public init(preparationMinutes: Int) { self.preparationMinutes = preparationMinutes }
}

/// `POST /v1/trips/{id}/cancel` body; both fields optional.
public struct CancelRequest: Codable, Sendable, Equatable {
    public let reason: String?
    public init(reason: String? = nil) { self.reason = reason }
}
