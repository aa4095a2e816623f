import Testing
import EnRouteModels
@testable import RideHailing

@Suite struct ScriptedLocationProviderTests {
    private let rough = ScriptedLocationProvider.Reading(Coordinate(lat: 1, lng: 1), accuracy: 120)
    private let fine = ScriptedLocationProvider.Reading(Coordinate(lat: 2, lng: 2), accuracy: 8)

    @Test func answersTheFirstReadingThatIsAccurateEnough() async throws {
        let provider = ScriptedLocationProvider([rough, fine])
        #expect(try await provider.currentLocation(accuracy: 50) == fine.coordinate)
        #expect(try await provider.currentLocation(accuracy: 500) == rough.coordinate)
    }

    @Test func failsWhenNoReadingIsAccurateEnough() async {
        await #expect(throws: LocationError.unavailable) {
            _ = try await ScriptedLocationProvider([rough]).currentLocation(accuracy: 10)
        }
    }
}
