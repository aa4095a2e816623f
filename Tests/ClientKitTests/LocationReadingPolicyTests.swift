import Testing
import ClientKit
import EnRouteModels

@Suite struct LocationReadingPolicyTests {
    static let here = Coordinate(lat: 60.1699, lng: 24.9384)

    static func reading(
        _ coordinate: Coordinate? = here, accuracy: Double = 10, denied: Bool = false,
        unavailable: Bool = false
    ) -> LocationReading {
        LocationReading(
            coordinate: coordinate, horizontalAccuracy: accuracy, authorizationDenied: denied,
            locationUnavailable: unavailable)
    }

    @Test func theFirstReadingAccurateEnoughIsUsed() {
        var policy = LocationReadingPolicy(accuracy: 50)
        #expect(policy.decide(Self.reading(accuracy: 120)) == .wait)
        #expect(policy.decide(Self.reading(accuracy: -1)) == .wait, "a negative accuracy marks an invalid fix")
        #expect(policy.decide(Self.reading(accuracy: 50)) == .use(Self.here))
    }

    /// With location denied the system keeps sending updates without a position; waiting for one never ends.
    @Test func aDeniedReadingEndsTheWaitAtOnce() {
        var policy = LocationReadingPolicy(accuracy: 50)
        #expect(policy.decide(Self.reading(nil, denied: true)) == .denied)
        #expect(policy.decide(Self.reading(denied: true)) == .denied, "denied wins over a stale position")
    }

    @Test func readingsWithoutAPositionEndTheWaitAfterTheLimit() {
        var policy = LocationReadingPolicy(accuracy: 50, unavailableLimit: 3)
        #expect(policy.decide(Self.reading(nil)) == .wait)
        #expect(policy.decide(Self.reading(unavailable: true)) == .wait)
        #expect(policy.decide(Self.reading(accuracy: 500)) == .wait, "a position, however rough, resets the count")
        #expect(policy.decide(Self.reading(nil)) == .wait)
        #expect(policy.decide(Self.reading(nil)) == .wait)
        #expect(policy.decide(Self.reading(nil, unavailable: true)) == .unavailable)
    }
}
