public import Foundation
public import EnRouteModels

/// One state change queued in the outbox (`StateChange`): sent as-is until the server answers.
public struct StepChange: Codable, Sendable, Equatable {
    /// Unique per change; the server applies a resent change id once.
    public let changeId: String
    /// The trip the step belongs to.
    public let tripId: String
    /// The step reported.
    public let step: ProviderStep
    /// When the provider tapped, by the device's clock.
    public let deviceTime: Date
    /// The last kept position when the provider tapped.
    public let position: Coordinate?
    /// The `delivered` step's proof, queued in the `ProofCaptureQueue` under this id.
    public var proofId: String? = nil

    /// A change as `reportStep` records it.
    public init(
        changeId: String, tripId: String, step: ProviderStep, deviceTime: Date, position: Coordinate?,
        proofId: String? = nil
    ) {
        self.changeId = changeId; self.tripId = tripId; self.step = step; self.deviceTime = deviceTime;
        self.position = position
        self.proofId = proofId
    }

    /// The request body for `POST /v1/provider/trips/{id}/steps`.
    public var request: StepRequest {
        StepRequest(
            changeId: changeId, step: step.rawValue, deviceTime: deviceTime, position: position, proofId: proofId)
    }
}
