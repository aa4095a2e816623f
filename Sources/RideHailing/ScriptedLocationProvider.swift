public import EnRouteModels

/// A `LocationProviding` that plays back fixed readings, for tests and tools (`--from LAT,LNG`).
public struct ScriptedLocationProvider: LocationProviding {
    /// One scripted reading: a position and its horizontal accuracy in metres.
    public struct Reading: Sendable, Equatable {
        /// The position.
        public var coordinate: Coordinate
        /// Horizontal accuracy in metres.
        public var accuracy: Double
        /// A reading at `coordinate`, good to `accuracy` metres.
        public init(_ coordinate: Coordinate, accuracy: Double) {
            self.coordinate = coordinate; self.accuracy = accuracy
        }
    }

    private let readings: [Reading]

    /// Plays back `readings` in order, as the location updates would arrive.
    public init(_ readings: [Reading]) { self.readings = readings }

    /// Always answers `coordinate`, as accurate as anyone asks.
    public init(fixed coordinate: Coordinate) { self.readings = [Reading(coordinate, accuracy: 0)] }

    /// The first scripted reading at least as accurate as `accuracy` metres.
    public func currentLocation(accuracy: Double) async throws -> Coordinate {
        guard let reading = readings.first(where: { $0.accuracy <= accuracy }) else { throw LocationError.unavailable }
        return reading.coordinate
    }
}
