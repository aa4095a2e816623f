import Testing
import EnRouteModels
import ProviderKit

@Suite struct ScriptedRouteTests {
    static let a = Coordinate(lat: 60.0, lng: 25.0)
    static let b = Coordinate(lat: 60.01, lng: 25.0)  // about 1112 m north
    static let c = Coordinate(lat: 60.01, lng: 25.02)  // then about 1112 m east

    @Test func interpolatesAlongEachLegAndClampsAtTheEnds() {
        let route = ScriptedRoute([Self.a, Self.b, Self.c])
        #expect(abs(route.length - 2224) < 10)
        let halfway = route.position(atDistance: route.length / 4)
        #expect(abs(halfway.coordinate.lat - 60.005) < 0.0001)
        #expect(abs(halfway.heading - 0) < 0.5)
        let onSecondLeg = route.position(atDistance: route.length * 0.75)
        #expect(abs(onSecondLeg.coordinate.lng - 25.01) < 0.0002)
        #expect(abs(onSecondLeg.heading - 90) < 1)
        #expect(route.position(atDistance: -5).coordinate == Self.a)
        #expect(route.position(atDistance: 1e9).coordinate == Self.c)
    }

    @Test func parsesWaypointsAndRefusesMalformedOnes() {
        #expect(
            ScriptedRoute.parse("60.1,24.9; 60.2,25.0") == [
                Coordinate(lat: 60.1, lng: 24.9), Coordinate(lat: 60.2, lng: 25.0),
            ])
        #expect(ScriptedRoute.parse("60.1,24.9;60.2") == nil)
        #expect(ScriptedRoute.parse("91,0") == nil)
        #expect(ScriptedRoute.parse("") == nil)
    }
}
