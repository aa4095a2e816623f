public import EnRouteModels

/// The provider's copy of a trip: the server's last word and what the provider's screen shows meanwhile.
public struct LocalTrip: Sendable, Equatable {
    /// The trip as the server last described it.
    public var server: TripSnapshot
    /// The status the screen shows: the last reported step while it is unsent, else the server's status.
    public var displayedStatus: String
    /// Steps written but not yet answered by the server.
    public var pendingSteps: Int

    /// A copy of `server`, showing `displayedStatus`.
    public init(server: TripSnapshot, displayedStatus: String? = nil, pendingSteps: Int = 0) {
        self.server = server
        self.displayedStatus = displayedStatus ?? server.status
        self.pendingSteps = pendingSteps
    }

    /// The trip's id.
    public var id: String { server.id }
}
