import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import TestSupport

/// Cities: the configuration file, which city holds a point, and trips, positions and dispatch staying inside their
/// city.
@Suite(.timeLimit(.minutes(1))) struct CitiesTests {
    /// Two cities meeting at longitude `border` east of the standard pickup: `west` holds it, `east` the rest.
    static let border = ProviderBackend.pickup.lng + 0.002
    static func split() throws -> Cities {
        let b = border
        return try Cities.load(
            geoJSON: Data(
                """
                {"type":"FeatureCollection","features":[
                 {"type":"Feature","properties":{"name":"west"},"geometry":{"type":"Polygon","coordinates":
                   [[[24.80,60.10],[\(b),60.10],[\(b),60.30],[24.80,60.30],[24.80,60.10]]]}},
                 {"type":"Feature","properties":{"name":"east"},"geometry":{"type":"Polygon","coordinates":
                   [[[\(b),60.10],[25.10,60.10],[25.10,60.30],[\(b),60.30],[\(b),60.10]]]}}]}
                """.utf8))
    }

    static func east(_ metres: Double) -> Coordinate {
        let p = ProviderBackend.pickup
        return Coordinate(lat: p.lat, lng: p.lng + metres / (111_195 * cos(p.lat * .pi / 180)))
    }

    @Test func aPointBelongsToTheCityHoldingItAndAHoleIsNotPartOfIt() throws {
        let cities = try Cities.load(
            geoJSON: Data(
                """
                {"type":"FeatureCollection","features":[
                 {"type":"Feature","properties":{"name":"ring"},"geometry":{"type":"Polygon","coordinates":[
                   [[0,0],[10,0],[10,10],[0,10],[0,0]], [[4,4],[6,4],[6,6],[4,6],[4,4]]]}},
                 {"type":"Feature","properties":{"name":"islands"},"geometry":{"type":"MultiPolygon","coordinates":[
                   [[[20,0],[21,0],[21,1],[20,1],[20,0]]], [[[30,0],[31,0],[31,1],[30,1],[30,0]]]]}}]}
                """.utf8))
        #expect(cities.names == ["ring", "islands"])
        #expect(cities.city(containing: Coordinate(lat: 2, lng: 2)) == "ring")
        #expect(cities.city(containing: Coordinate(lat: 5, lng: 5)) == nil)  // in the hole
        #expect(cities.city(containing: Coordinate(lat: 0.5, lng: 30.5)) == "islands")  // the second polygon
        #expect(cities.city(containing: Coordinate(lat: 0.5, lng: 25)) == nil)  // between the islands
        #expect(Cities.everywhere.city(containing: Coordinate(lat: -33.9, lng: 151.2)) == Cities.defaultName)
    }

    @Test func aBoundaryIsReadToTheNearestDoubleOfItsText() throws {
        // JSONSerialization on Linux reads 60.305555555555564 as 60.30555555555558.
        let cities = try Cities.load(
            geoJSON: Data(
                """
                {"type":"FeatureCollection","features":[
                 {"type":"Feature","properties":{"name":"west"},"geometry":{"type":"Polygon","coordinates":
                   [[[24.8,60.1],[24.95,60.1],[24.8,60.305555555555564],[24.8,60.1]]]}}]}
                """.utf8))
        #expect(cities.all[0].polygons[0].outer[2].lat == 60.305555555555564)
    }

    @Test func aBooleanOrAStringIsNotACoordinate() {
        for member in ["true", "\"24.8\"", "null"] {
            let document =
                #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"a"},"#
                + #""geometry":{"type":"Polygon","coordinates":[[[\#(member),60.1],[24.9,60.1],[24.9,60.2],"#
                + #"[\#(member),60.1]]]}}]}"#
            #expect(throws: CitiesFileError.self) { try Cities.load(geoJSON: Data(document.utf8)) }
        }
    }

    @Test(arguments: [
        (#"{"type":"Feature"}"#, "type: must be a GeoJSON FeatureCollection"),
        (#"{"type":"FeatureCollection","features":[]}"#, "features: must list at least one city"),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"a "#
                + #"b"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}}]}"#,
            #"features[0].properties.name: must be 1 to 64 letters, digits, '-' or '_', not "a b""#
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"a"},"#
                + #""geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}}]}"#,
            "features[0].geometry.coordinates[0]: must be closed: its last position must equal its first"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"a"},"#
                + #""geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0]]]}}]}"#,
            "features[0].geometry.coordinates[0]: a ring needs at least 4 positions, the last equal to the first"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"a"},"#
                + #""geometry":{"type":"Polygon","coordinates":[[[0,0],[1,95],[1,1],[0,0]]]}}]}"#,
            "features[0].geometry.coordinates[0][1]: must be [longitude, latitude] within [-180, 180] and [-90, 90]"
        ),
        // A boolean is not a number, though Foundation reads `true` as 1 (found by the CitiesGeoJSON fuzz target).
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"a"},"geometry":"#
                + #"{"type":"Polygon","coordinates":[[[0,0],[true,0],[1,1],[0,0]]]}}]}"#,
            "features[0].geometry.coordinates[0][1]: must be [longitude, latitude] within [-180, 180] and [-90, 90]"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"a"},"geometry":"#
                + #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,false],[0,0]]]}}]}"#,
            "features[0].geometry.coordinates[0][2]: must be [longitude, latitude] within [-180, 180] and [-90, 90]"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"a"},"#
                + #""geometry":{"type":"Point","coordinates":[0,0]}}]}"#,
            "features[0].geometry.type: must be Polygon or MultiPolygon, not Point"
        ),
        (
            #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"a"},"#
                + #""geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}},{"type":"Feature","#
                + #""properties":{"name":"a"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],"#
                + #"[0,0]]]}}]}"#,
            #"features[1].properties.name: "a" names two cities"#
        ),
    ])
    func aMalformedCitiesFileSaysWhereItIsWrong(document: String, message: String) {
        #expect(throws: CitiesFileError.self) { try Cities.load(geoJSON: Data(document.utf8)) }
        do { _ = try Cities.load(geoJSON: Data(document.utf8)) } catch { #expect(error.description == message) }
    }

    @Test func aSearchFindsOnlyProvidersInTheCityHoldingItsCentre() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let presence = ProviderPresence(cities: try Self.split(), now: { now })
        presence.setOnline("w", true, position: ProviderBackend.north(400))
        presence.setOnline("e", true, position: Self.east(150))  // nearer, but across the border
        presence.setOnline("away", true, position: Coordinate(lat: 59.0, lng: 24.9))  // in no city: not findable
        #expect(presence.nearest(to: ProviderBackend.pickup, limit: 5, within: 5_000).map(\.id) == ["w"])
        #expect(presence.nearest(to: Self.east(300), limit: 5, within: 5_000).map(\.id) == ["e"])
        #expect(presence.findableByCity == ["west": 1, "east": 1])
        // A provider crossing the border moves to the other city's grid.
        presence.update("e", to: ProviderBackend.north(100), recordedAt: now)
        #expect(presence.nearest(to: ProviderBackend.pickup, limit: 5, within: 5_000).map(\.id) == ["e", "w"])
        #expect(presence.nearest(to: Self.east(300), limit: 5, within: 5_000).isEmpty)
        #expect(presence.findableByCity == ["west": 2])
    }

    @Test func aRideBelongsToItsPickupsCityAndIsOfferedOnlyToProvidersThere() async throws {
        let sut = try ProviderBackend(cities: try Self.split())
        await sut.online("east", at: Self.east(150))
        await sut.online("west", at: ProviderBackend.north(400))
        var west = ProviderInbox(sut.providers, "west")
        let trip = try await sut.requestRide()
        #expect(try sut.service.cached(trip.id)?.city == "west")
        let offer = try await west.offer()
        #expect(offer.tripId == trip.id)
        #expect(sut.providers.dispatcher.liveOffer(heldBy: "east") == nil)
    }

    @Test func aPickupOutsideEveryCityIsRefusedBeforeAQuoteOrATrip() async throws {
        let sut = try ProviderBackend(cities: try Self.split())
        let customer = sut.token("c1", .customer)
        let far = #"{"lat":59.0,"lng":24.9}"#
        let estimate = await sut.backend.call(
            "POST", APIPath.estimates, token: customer, json: #"{"pickup":\#(far),"dropoff":\#(TestBackend.dropoff)}"#)
        #expect(estimate.status == 422)
        let problem = String(decoding: estimate.body, as: UTF8.self)
        #expect(problem.contains("/pickup") && problem.contains("outside every city EnRoute serves (west, east)"))
        // A delivery belongs to its merchant's city.
        let order = try await sut.backend.placeOrder()
        #expect(try sut.service.cached(order.orderId)?.city == "west")
        let body = try await sut.backend.orderBody(
            "c2", merchantId: "m2", items: #"[{"sku":"sandwich","quantity":1}]"#, destination: TestBackend.dropoff)
        let placed = await sut.backend.call(
            "POST", "/v1/orders", token: sut.token("c2", .customer), json: body,
            headers: ["Idempotency-Key": "order-from-the-east"])
        #expect(placed.status == 201, "\(String(decoding: placed.body, as: UTF8.self))")
        let east = try WireCoding.decoder().decode(TrackingDTO.self, from: Data(placed.body))
        #expect(try sut.service.cached(east.orderId)?.city == "east")
    }
}
