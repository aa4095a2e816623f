/// One member found by GEOSEARCH, with its distance from the search's centre.
public struct RedisGeoMatch: Sendable, Equatable {
    /// The member's name.
    public var member: String
    /// The distance from the centre, in metres.
    public var distanceMeters: Double

    /// A match `member` at `distanceMeters`.
    public init(member: String, distanceMeters: Double) {
        self.member = member
        self.distanceMeters = distanceMeters
    }
}
