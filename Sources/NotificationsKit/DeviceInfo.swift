/// What the registration says about this install besides its token.
public struct DeviceInfo: Sendable, Equatable {
    /// "sandbox" for development builds, "production" for TestFlight and the App Store.
    public var environment: String
    public var appVersion: String

    public init(environment: String, appVersion: String) {
        self.environment = environment; self.appVersion = appVersion
    }
}
