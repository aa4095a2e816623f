public import EnRouteModels

/// One update from the system's location stream, as the platform adapter reads it (on Apple platforms a
/// `CLLocationUpdate` and, before iOS 18, the location manager's authorization status).
public struct LocationReading: Sendable, Equatable {
    /// The position, or nil when the update carries none.
    public var coordinate: Coordinate?
    /// Horizontal accuracy in metres; negative when the position is invalid.
    public var horizontalAccuracy: Double
    /// The user or a policy denied location to this app (or to every app).
    public var authorizationDenied: Bool
    /// The system could not determine a position this time.
    public var locationUnavailable: Bool

    /// A reading with every field given.
    public init(
        coordinate: Coordinate?, horizontalAccuracy: Double, authorizationDenied: Bool,
        locationUnavailable: Bool
    ) {
        self.coordinate = coordinate
        self.horizontalAccuracy = horizontalAccuracy
        self.authorizationDenied = authorizationDenied
        self.locationUnavailable = locationUnavailable
    }
}

/// What to do with one reading while waiting for a position.
public enum LocationDecision: Equatable, Sendable {
    /// A position good enough: use it.
    case use(Coordinate)
    /// Not good enough yet: wait for the next update.
    case wait
    /// Location is denied: stop waiting and say so (the app points to Settings).
    case denied
    /// Updates keep coming without a position: stop waiting and say so.
    case unavailable
}

/// Decides, reading by reading, whether a position request is answered, still pending or failed.
///
/// A denied reading fails at once: the system keeps sending updates without a location while access is denied, so
/// a caller that only waits for a position would wait forever. `unavailableLimit` readings in a row without a
/// position fail too; a usable reading resets the count.
public struct LocationReadingPolicy: Sendable {
    /// The accuracy asked for, in metres.
    public let accuracy: Double
    /// How many readings in a row may come without a position before the request fails.
    public let unavailableLimit: Int
    private var unavailableInARow = 0

    /// A policy that wants a position within `accuracy` metres and gives up after `unavailableLimit` empty readings.
    public init(accuracy: Double, unavailableLimit: Int = 5) {
        self.accuracy = accuracy
        self.unavailableLimit = max(1, unavailableLimit)
    }

    /// The decision for the next reading.
    public mutating func decide(_ reading: LocationReading) -> LocationDecision {
        if reading.authorizationDenied { return .denied }
        guard let coordinate = reading.coordinate, !reading.locationUnavailable else {
            unavailableInARow += 1
            return unavailableInARow >= unavailableLimit ? .unavailable : .wait
        }
        unavailableInARow = 0
        guard reading.horizontalAccuracy >= 0, reading.horizontalAccuracy <= accuracy else { return .wait }
        return .use(coordinate)
    }
}
