import HTTPTransport
import EnRouteDomain
import EnRouteModels
import EnRouteRoads
import Foundation
import Testing

/// An OSRM server as recorded: answers what the test says and fails any other request.
private struct RecordedOSRM: HTTPClient {
    let answer: @Sendable (HTTPClientRequest) throws -> HTTPClientResponse

    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse { try answer(request) }

    func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        AsyncThrowingStream { $0.finish(throwing: HTTPClientError.network("OSRM has no streams")) }
    }
}

// Answers recorded from osrm-routed 26.10 (osrm-bindings) on data/osm/Helsinki-clean.osm.pbf.
/// An OSRM hint: opaque to EnRoute, 112 characters as osrm-routed sends them.
private let hint112 = String(repeating: "A", count: 112)
private let routeAnswer =
    #"{"code":"Ok","routes":[{"legs":[{"steps":[{"intersections":[{"out":0,"entry":[true],"bearings":[228],"#
    + #""location":[24.938396,60.169902]},{"out":2,"in":0,"entry":[false,false,true,false],"bearings":[45,135,240,"#
    + #"315],"location":[24.938295,60.169857]}],"driving_side":"right","#
    + #""geometry":"{inwqBwxbqn@xAhEtAjGNd@xMhi@pAjF|AfF","maneuver":{"bearing_after":228,"#
    + #""bearing_before":0,"location":[24.938396,60.169902],"type":"depart"},"name":"Kaivokatu","#
    + #""mode":"driving","weight":14,"duration":14,"distance":80},{"intersections":[{"in":0,"#
    + #""entry":[true],"bearings":[51],"location":[24.937231,60.169481]}],"#
    + #""driving_side":"right","geometry":"qomwqB}o`qn@","maneuver":{"bearing_after":0,"#
    + #""bearing_before":231,"location":[24.937231,60.169481],"type":"arrive"},"#
    + #""name":"Simonkatu","mode":"driving","weight":0,"duration":0,"distance":0}"#
    + #"],"weight":14,"summary":"Kaivokatu, "#
    + #"Simonkatu","duration":14,"distance":80}],"#
    + #""weight_name":"routability","#
    + #""geometry":"{inwqBwxbqn@xAhEtAjGNd@xMhi@pAjF|AfF","#
    + #""weight":14,"duration":14,"distance":80}],"#
    + #""waypoints":[{"hint":"\#(hint112)","location":[24.938396,60.169902],"name":"Kaivokatu","#
    + #""distance":0.3145574465},{"hint":"\#(hint112)","location":[24.937231,60.169481],"name":"Simonkatu","#
    + #""distance":2.727981033}]}"#
private let tableAnswer =
    #"{"code":"Ok","distances":[[80,null]],"#
    + #""destinations":[{"hint":"\#(hint112)","location":[24.937231,60.169481],"name":"Simonkatu","#
    + #""distance":2.727981033},{"hint":"\#(hint112)","location":[24.941446,60.17025],"name":"","#
    + #""distance":28.01461405}],"durations":[[14,null]],"sources":[{"hint":"\#(hint112)","#
    + #""location":[24.938396,60.169902],"name":"Kaivokatu","distance":0.3145574465}]}"#
private let nearestAnswer =
    #"{"code":"Ok","waypoints":[{"nodes":[313959318,313959319],"#
    + #""hint":"\#(hint112)","location":[24.938396,60.169902],"name":"Kaivokatu","distance":0.3145574465}]}"#
private let noSegmentAnswer = #"{"message":"Could not find a matching segment for coordinate 1","code":"NoSegment"}"#

private let kaivokatu = Coordinate(lat: 60.1699, lng: 24.9384)
private let simonkatu = Coordinate(lat: 60.1695, lng: 24.9372)
private let now = Date(timeIntervalSince1970: 1_800_000_000)

@Suite struct OSRMRoadRoutingTests {
    func makeSUT(
        status: Int = 200, body: String, expect: @escaping @Sendable (URL) -> Void = { _ in }
    ) -> OSRMRoadRouting {
        OSRMRoadRouting(
            baseURL: URL(string: "http://osrm.test:5000/")!,
            client: RecordedOSRM { request in
                expect(request.url)
                #expect(request.timeout == .seconds(5))
                return HTTPClientResponse(
                    status: status, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
            })
    }

    @Test func aRouteAsksForStepsAndTheFullPolyline6AndBecomesALeg() async throws {
        let roads = makeSUT(body: routeAnswer) { url in
            #expect(url.path == "/route/v1/driving/24.938400,60.169900;24.937200,60.169500")
            let query = url.query ?? ""
            #expect(
                query.contains("overview=full") && query.contains("geometries=polyline6")
                    && query.contains("steps=true"))
            #expect(query.contains("radiuses=100;100"))
        }
        let leg = try await roads.route(from: kaivokatu, to: simonkatu, heading: nil, departure: now)
        #expect(leg.distanceMeters == 80 && leg.durationSeconds == 14)
        #expect(leg.steps.map(\.type) == ["depart", "arrive"])
        #expect(leg.steps.map(\.name) == ["Kaivokatu", "Simonkatu"])
        #expect(leg.steps[0].bearingAfter == 228 && leg.steps[1].bearingBefore == 231)
        #expect(leg.geometry.count == 7)
        #expect(leg.geometry.first == Coordinate(lat: 60.169902, lng: 24.938396))
        #expect(leg.start.name == "Kaivokatu" && leg.start.location == Coordinate(lat: 60.169902, lng: 24.938396))
        #expect(leg.end.name == "Simonkatu" && abs(leg.end.distanceMeters - 2.727981033) < 1e-9)
        #expect(leg.start.bearing == 228 && leg.end.bearing == 231)
    }

    @Test func aHeadingIsSentAsTheFirstCoordinatesBearing() async throws {
        let roads = makeSUT(body: routeAnswer) { url in #expect(url.query?.contains("bearings=228,45;") == true) }
        _ = try await roads.route(from: kaivokatu, to: simonkatu, heading: 228.4, departure: now)
    }

    /// OSRM takes bearings in 0...360 only; a heading west of north given as negative is sent as its whole degrees.
    @Test func aNegativeHeadingIsSentWithinOSRMsRange() async throws {
        let roads = makeSUT(body: routeAnswer) { url in #expect(url.query?.contains("bearings=270,45;") == true) }
        _ = try await roads.route(from: kaivokatu, to: simonkatu, heading: -90, departure: now)
    }

    @Test func noSegmentNamesTheCoordinateOSRMCouldNotSnap() async {
        let roads = makeSUT(status: 400, body: noSegmentAnswer)
        await #expect(throws: RoadRoutingError.noSegment(index: 1)) {
            _ = try await roads.route(
                from: kaivokatu, to: Coordinate(lat: 60.4, lng: 25.3), heading: nil, departure: now)
        }
    }

    @Test func noRouteIsNoRoute() async {
        let roads = makeSUT(status: 400, body: #"{"message":"Impossible route between points","code":"NoRoute"}"#)
        await #expect(throws: RoadRoutingError.noRoute) {
            _ = try await roads.route(from: kaivokatu, to: simonkatu, heading: nil, departure: now)
        }
    }

    @Test(arguments: [
        (HTTPClientError.timedOut, "OSRM at http://osrm.test:5000/ did not answer within 5.0 seconds"),
        (
            HTTPClientError.network("connection refused"),
            "OSRM at http://osrm.test:5000/ is not reachable: connection refused"
        ),
    ])
    func aTransportFailureIsUnavailableWithItsCause(failure: HTTPClientError, message: String) async {
        let roads = OSRMRoadRouting(
            baseURL: URL(string: "http://osrm.test:5000/")!, client: RecordedOSRM { _ in throw failure })
        await #expect(throws: RoadRoutingError.unavailable(message)) {
            _ = try await roads.route(from: kaivokatu, to: simonkatu, heading: nil, departure: now)
        }
    }

    @Test func anAnswerThatIsNotOSRMsJSONIsUnavailable() async {
        let roads = makeSUT(status: 502, body: "<html>Bad Gateway</html>")
        await #expect(
            throws: RoadRoutingError.unavailable(
                "OSRM at http://osrm.test:5000/ answered 502 with a body that is not OSRM's JSON")
        ) {
            _ = try await roads.route(from: kaivokatu, to: simonkatu, heading: nil, departure: now)
        }
    }

    @Test func anotherRefusalIsUnavailableWithOSRMsCodeAndMessage() async {
        let roads = makeSUT(status: 400, body: #"{"message":"Too many table coordinates","code":"TooBig"}"#)
        await #expect(
            throws: RoadRoutingError.unavailable(
                "OSRM at http://osrm.test:5000/ answered 400 TooBig: Too many table coordinates")
        ) {
            _ = try await roads.table(sources: [kaivokatu], destinations: [simonkatu], departure: now)
        }
    }

    @Test func aTableAsksSourcesThenDestinationsAndKeepsUnreachableCellsNil() async throws {
        let roads = makeSUT(body: tableAnswer) { url in
            #expect(url.query?.contains("sources=0&destinations=1;2&annotations=duration,distance") == true)
        }
        let cells = try await roads.table(
            sources: [kaivokatu], destinations: [simonkatu, Coordinate(lat: 60.17, lng: 24.9415)], departure: now)
        #expect(cells == [[RoadCost(durationSeconds: 14, distanceMeters: 80), nil]])
    }

    @Test func nearestIsTheSnappedPointWithItsStreet() async throws {
        let roads = makeSUT(body: nearestAnswer) { url in #expect(url.path == "/nearest/v1/driving/24.938400,60.169900")
        }
        let waypoint = try await roads.nearest(kaivokatu, heading: 90)
        #expect(
            waypoint
                == RoadWaypoint(
                    location: Coordinate(lat: 60.169902, lng: 24.938396), name: "Kaivokatu",
                    distanceMeters: 0.3145574465, bearing: 90))
    }
}
