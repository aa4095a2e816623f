/// Where ride-hailing code reports things worth a look; injected because Linux has no `os.Logger`.
public protocol RideLogger: Sendable {
    /// Records something unexpected that the code recovered from.
    func warning(_ message: String)
}
