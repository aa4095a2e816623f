/// Where the sender hands pushes: APNs, or a log when APNs is not configured.
public protocol PushGateway: Sendable {
    /// Sends one push and says what happened; never throws.
    func send(_ push: APNsPush) async -> PushOutcome
}
