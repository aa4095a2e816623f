import Foundation
import EnRouteDomain
import EnRouteModels
import Testing
import TestSupport
@testable import EnRouteAPI

/// The OSRM-compatible endpoints on central Helsinki, through the router in process, without a token.
@Suite struct OSRMRoutesTests {
    static let kaivokatu = "24.9384,60.1699"
    static let unioninkatu = "24.9500,60.1750"

    func makeSUT() async throws -> TestBackend { TestBackend(roads: try await TestRoads.helsinki()) }

    func json(_ body: [UInt8]) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
    }

    @Test func aRouteWithStepsHasOSRMsShapeFromRoutesToManeuvers() async throws {
        let backend = try await makeSUT()
        let r = await backend.call(
            "GET",
            "/route/v1/driving/\(Self.kaivokatu);\(Self.unioninkatu)?steps=true&geometries=polyline6&overview=full",
            token: nil)
        #expect(r.status == 200)
        let body = try json(r.body)
        #expect(body["code"] as? String == "Ok")
        let route = try #require((body["routes"] as? [[String: Any]])?.first)
        #expect(Set(route.keys) == ["geometry", "legs", "weight_name", "weight", "duration", "distance"])
        let leg = try #require((route["legs"] as? [[String: Any]])?.first)
        #expect(Set(leg.keys) == ["steps", "summary", "weight", "duration", "distance"])
        let steps = try #require(leg["steps"] as? [[String: Any]])
        #expect(steps.count >= 3)
        for step in steps {
            #expect(
                Set(step.keys) == [
                    "intersections", "driving_side", "geometry", "maneuver", "name", "mode", "weight", "duration",
                    "distance",
                ])
            let maneuver = try #require(step["maneuver"] as? [String: Any])
            #expect(Set(maneuver.keys).isSuperset(of: ["bearing_after", "bearing_before", "location", "type"]))
        }
        #expect((steps.first?["maneuver"] as? [String: Any])?["type"] as? String == "depart")
        #expect((steps.last?["maneuver"] as? [String: Any])?["type"] as? String == "arrive")
        // The overview decodes to the road from the first waypoint to the last.
        let waypoints = try #require(body["waypoints"] as? [[String: Any]])
        #expect(waypoints.count == 2)
        let points = try Polyline.decode(try #require(route["geometry"] as? String), precision: 6)
        let first = try #require(waypoints[0]["location"] as? [Double])
        #expect(abs(points[0].lng - first[0]) < 1e-6 && abs(points[0].lat - first[1]) < 1e-6)
        // The steps' geometries join up into the overview.
        var joined: [Coordinate] = []
        for step in steps.dropLast() {
            let part = try Polyline.decode(try #require(step["geometry"] as? String), precision: 6)
            joined += joined.isEmpty ? part : Array(part.dropFirst())
        }
        #expect(joined == points)
        let distance = try #require(route["distance"] as? Double)
        let stepMetres = steps.compactMap { $0["distance"] as? Double }.reduce(0, +)
        #expect(abs(distance - stepMetres) < 1)
    }

    @Test func overviewFalseAndGeoJSONAreHonoured() async throws {
        let backend = try await makeSUT()
        let bare = try json(
            await backend.call(
                "GET", "/route/v1/driving/\(Self.kaivokatu);\(Self.unioninkatu)?overview=false", token: nil
            ).body)
        let route = try #require((bare["routes"] as? [[String: Any]])?.first)
        #expect(route["geometry"] == nil)
        #expect(((route["legs"] as? [[String: Any]])?.first?["steps"] as? [Any])?.isEmpty == true)
        // As OSRM, a leg's summary is empty without steps.
        #expect((route["legs"] as? [[String: Any]])?.first?["summary"] as? String == "")
        let geo = try json(
            await backend.call(
                "GET", "/route/v1/driving/\(Self.kaivokatu);\(Self.unioninkatu)?geometries=geojson", token: nil
            ).body)
        let geometry = try #require((geo["routes"] as? [[String: Any]])?.first?["geometry"] as? [String: Any])
        #expect(geometry["type"] as? String == "LineString")
        #expect(((geometry["coordinates"] as? [[Double]])?.count ?? 0) >= 2)
    }

    @Test func aRouteThroughThreeCoordinatesHasTwoLegsAndThreeWaypoints() async throws {
        let backend = try await makeSUT()
        let body = try json(
            await backend.call(
                "GET", "/route/v1/driving/\(Self.kaivokatu);24.9440,60.1690;\(Self.unioninkatu)", token: nil
            ).body)
        let route = try #require((body["routes"] as? [[String: Any]])?.first)
        #expect((route["legs"] as? [Any])?.count == 2)
        #expect((body["waypoints"] as? [Any])?.count == 3)
    }

    @Test func aTableHasOneRowPerSourceAndOneColumnPerDestination() async throws {
        let backend = try await makeSUT()
        let r = await backend.call(
            "GET",
            "/table/v1/driving/\(Self.kaivokatu);\(Self.unioninkatu);24.9440,60.1690?sources=0&destinations=1;2&"
                + "annotations=duration,distance",
            token: nil)
        let body = try json(r.body)
        #expect(body["code"] as? String == "Ok")
        let durations = try #require(body["durations"] as? [[Double]]),
            distances = try #require(body["distances"] as? [[Double]])
        #expect(durations.count == 1 && durations[0].count == 2 && distances.count == 1 && distances[0].count == 2)
        #expect(durations[0].allSatisfy { $0 > 0 })
        #expect((body["sources"] as? [Any])?.count == 1 && (body["destinations"] as? [Any])?.count == 2)
    }

    @Test func nearestIsTheSnappedPointWithItsStreet() async throws {
        let backend = try await makeSUT()
        let body = try json(await backend.call("GET", "/nearest/v1/driving/\(Self.kaivokatu)", token: nil).body)
        let waypoint = try #require((body["waypoints"] as? [[String: Any]])?.first)
        #expect(Set(waypoint.keys) == ["nodes", "hint", "distance", "name", "location"])
        #expect(waypoint["name"] as? String == "Kaivokatu")
    }

    /// OSRM's refusals: its code and message in `{code, message}` with OSRM's status, not problem+json.
    @Test(arguments: [
        ("/route/v1/driving/\(kaivokatu);25.3,60.4", "NoSegment", "Could not find a matching segment for coordinate 1"),
        ("/table/v1/driving/25.3,60.4;\(kaivokatu)", "NoSegment", "Could not find a matching segment for coordinate 0"),
        ("/route/v1/driving/\(kaivokatu)", "InvalidOptions", "Number of coordinates needs to be at least two."),
        ("/route/v1/driving/\(kaivokatu);200,0", "InvalidValue", "Invalid coordinate value."),
        ("/route/v1/driving/abc", "InvalidQuery", "Query string malformed close to position 18"),
        (
            "/route/v1/driving/\(kaivokatu);\(unioninkatu)?foo=bar", "InvalidQuery",
            "Query string malformed close to position 50"
        ),
        (
            "/route/v1/driving/\(kaivokatu);\(unioninkatu)?bearings=10,20", "InvalidOptions",
            "Number of elements in bearings size 1 does not match coordinate size 2"
        ),
        ("/route/v1/driving", "InvalidUrl", "URL string malformed close to position 16"),
        ("/route/v2/driving/\(kaivokatu);\(unioninkatu)", "InvalidVersion", "Service route not found!"),
        (
            "/table/v1/driving/" + Array(repeating: kaivokatu, count: 101).joined(separator: ";"), "TooBig",
            "Too many table coordinates"
        ),
    ])
    func aRefusalIsOSRMsCodeAndMessage(path: String, code: String, message: String) async throws {
        let backend = try await makeSUT()
        let r = await backend.call("GET", path, token: nil)
        #expect(r.status == 400)
        #expect(r.headers["Content-Type"] == "application/json")
        let body = try json(r.body)
        #expect(body["code"] as? String == code)
        #expect(body["message"] as? String == message)
    }

    @Test func withoutARoadNetworkTheEndpointsAre404Problems() async throws {
        let backend = TestBackend()
        let r = await backend.call("GET", "/route/v1/driving/\(Self.kaivokatu);\(Self.unioninkatu)", token: nil)
        #expect(r.status == 404)
        #expect(r.headers["Content-Type"]?.hasPrefix("application/problem+json") == true)
    }

    /// An external router that fails answers 503 problem+json saying why, not an OSRM code.
    @Test func anUnavailableRouterIs503WithTheCause() async throws {
        let backend = TestBackend(roads: DownRoads())
        let r = await backend.call("GET", "/route/v1/driving/\(Self.kaivokatu);\(Self.unioninkatu)", token: nil)
        #expect(r.status == 503)
        #expect(String(decoding: r.body, as: UTF8.self).contains("OSRM at http://osrm.test is not reachable"))
    }
}

/// An external router that cannot be reached.
private struct DownRoads: RoadRouting {
    func route(
        from: Coordinate, to: Coordinate, heading: Double?, departure: Date
    ) async throws(RoadRoutingError) -> RoadLeg {
        throw .unavailable("OSRM at http://osrm.test is not reachable")
    }
    func table(
        sources: [Coordinate], destinations: [Coordinate], departure: Date
    ) async throws(RoadRoutingError) -> [[RoadCost?]] {
        throw .unavailable("OSRM at http://osrm.test is not reachable")
    }
    func nearest(_ coordinate: Coordinate, heading: Double?) async throws(RoadRoutingError) -> RoadWaypoint {
        throw .unavailable("OSRM at http://osrm.test is not reachable")
    }
}

/// Numbers as OSRM prints them, strings escaped, polylines with `\` escaped.
@Suite struct OSRMJSONWriterTests {
    @Test(arguments: [
        (12.0, 1, "12"), (0.05, 2, "0.05"), (-1.25, 2, "-1.25"), (444.1, 1, "444.1"), (0.0, 1, "0"),
        (2.727981, 6, "2.727981"),
        (24.9384, 6, "24.9384"), (60.000001, 6, "60.000001"), (-0.04, 1, "0"), (Double.nan, 1, "null"),
    ])
    func numbersHaveTheirDecimalsWithoutTrailingZeros(value: Double, decimals: Int, text: String) {
        var w = OSRMJSONWriter()
        w.number(value, decimals: decimals)
        #expect(String(decoding: w.bytes, as: UTF8.self) == text)
    }

    @Test func stringsAreEscaped() throws {
        var w = OSRMJSONWriter()
        w.string("a\"b\\c\nd\u{01}é")
        let text = String(decoding: w.bytes, as: UTF8.self)
        #expect(text == #""a\"b\\c\nd\u0001é""#)
        #expect(
            try JSONSerialization.jsonObject(with: Data(w.bytes), options: .fragmentsAllowed) as? String
                == "a\"b\\c\nd\u{01}é")
    }

    /// Some polylines contain `\`, which a JSON string must escape; decoded back they are the same points.
    @Test func aPolylineWithABackslashIsValidJSONAndDecodesToThePoints() throws {
        let points = [
            Coordinate(lat: 60.169902, lng: 24.938396), Coordinate(lat: 60.169887, lng: 24.938295),
            Coordinate(lat: 60.16981, lng: 24.93843),
        ]
        var w = OSRMJSONWriter()
        w.geometry(points, as: .polyline6)
        #expect(w.bytes.contains(UInt8(ascii: "\\")))
        let decoded = try #require(
            JSONSerialization.jsonObject(with: Data(w.bytes), options: .fragmentsAllowed) as? String)
        #expect(decoded == Polyline.encode(points, precision: 6))
        #expect(try Polyline.decode(decoded, precision: 6) == points)
    }
}
