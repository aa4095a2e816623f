public import Foundation
public import HTTPTransport
public import EnRouteDomain
public import EnRouteModels

/// An external OSRM (`osrm-routed`, or anything speaking its HTTP API) behind the domain's `RoadRouting` seam,
/// for users who already run one (`enroute serve --router osrm --osrm-url URL`).
///
/// Each query is one GET with a timeout through the injected transport. OSRM's `NoSegment` and `NoRoute` become
/// the seam's errors; anything else (no connection, a timeout, another status, an answer that does not parse)
/// is `unavailable` saying what happened. OSRM snaps without a distance limit unless asked, so every query
/// sends `radiuses` of `maxSnapDistance`. OSRM knows no departure time: `departure` is not used.
public struct OSRMRoadRouting: RoadRouting {
    /// The OSRM server's base URL, e.g. `http://127.0.0.1:5000`.
    public let baseURL: URL
    /// The profile segment of OSRM's URLs (osrm-routed serves one profile whatever it is called).
    public let profile: String
    /// How long one query may take.
    public let timeout: Duration
    /// How far from a road a coordinate may be and still be routed from, in metres.
    public let maxSnapDistance: Double
    private let client: any HTTPClient

    /// OSRM at `baseURL`, asked through `client`.
    public init(
        baseURL: URL, client: any HTTPClient, profile: String = "driving", timeout: Duration = .seconds(5),
        maxSnapDistance: Double = 100
    ) {
        self.baseURL = baseURL; self.client = client; self.profile = profile; self.timeout = timeout;
        self.maxSnapDistance = maxSnapDistance
    }

    public func route(
        from: Coordinate, to: Coordinate, heading: Double?, departure: Date
    ) async throws(RoadRoutingError) -> RoadLeg {
        var options = ["overview=full", "geometries=polyline6", "steps=true", "radiuses=\(radius);\(radius)"]
        if let heading { options.append("bearings=\(Self.degrees(heading)),45;") }
        let answer: OSRMWire.Route = try await get("route", [from, to], options)
        guard let route = answer.routes?.first, let leg = route.legs.first, let waypoints = answer.waypoints,
            waypoints.count == 2
        else {
            throw .unavailable("OSRM at \(baseURL.absoluteString) answered Ok without a route")
        }
        let geometry: [Coordinate]
        do {
            geometry = try Polyline.decode(route.geometry ?? "", precision: 6)
        } catch {
            throw .unavailable("OSRM at \(baseURL.absoluteString) sent a geometry that is not a polyline6: \(error)")
        }
        let steps = leg.steps.map { step in
            RouteManeuver(
                type: step.maneuver.type,
                modifier: step.maneuver.type == "depart" || step.maneuver.type == "arrive"
                    ? nil : step.maneuver.modifier,
                name: step.name, distanceMeters: step.distance, durationSeconds: step.duration,
                location: step.maneuver.location.coordinate, bearingBefore: step.maneuver.bearing_before,
                bearingAfter: step.maneuver.bearing_after, exit: step.maneuver.exit)
        }
        let startBearing = Double(leg.steps.first?.maneuver.bearing_after ?? 0)
        let endBearing = Double(leg.steps.last?.maneuver.bearing_before ?? 0)
        return RoadLeg(
            distanceMeters: route.distance, durationSeconds: route.duration, geometry: geometry, steps: steps,
            start: waypoints[0].waypoint(bearing: startBearing), end: waypoints[1].waypoint(bearing: endBearing))
    }

    public func table(
        sources: [Coordinate], destinations: [Coordinate], departure: Date
    ) async throws(RoadRoutingError) -> [[RoadCost?]] {
        guard !sources.isEmpty, !destinations.isEmpty else { return sources.map { _ in [] } }
        let all = sources + destinations
        let options = [
            "sources=" + sources.indices.map(String.init).joined(separator: ";"),
            "destinations=" + destinations.indices.map { String(sources.count + $0) }.joined(separator: ";"),
            "annotations=duration,distance",
            "radiuses=" + all.map { _ in radius }.joined(separator: ";"),
        ]
        let answer: OSRMWire.Table = try await get("table", all, options)
        guard let durations = answer.durations, let distances = answer.distances, durations.count == sources.count,
            distances.count == sources.count,
            zip(durations, distances).allSatisfy({ $0.count == destinations.count && $1.count == destinations.count })
        else {
            throw .unavailable(
                "OSRM at \(baseURL.absoluteString) answered a table that is not \(sources.count)×\(destinations.count)")
        }
        return zip(durations, distances).map { row, metres in
            zip(row, metres).map { duration, distance in
                guard let duration, let distance else { return nil }
                return RoadCost(durationSeconds: duration, distanceMeters: distance)
            }
        }
    }

    public func nearest(_ coordinate: Coordinate, heading: Double?) async throws(RoadRoutingError) -> RoadWaypoint {
        var options = ["number=1", "radiuses=\(radius)"]
        if let heading { options.append("bearings=\(Self.degrees(heading)),45") }
        let answer: OSRMWire.Nearest = try await get("nearest", [coordinate], options)
        guard let first = answer.waypoints?.first else { throw .noSegment(index: 0) }
        // OSRM's nearest gives no road heading; the asked heading stands in for it when there is one.
        return first.waypoint(bearing: heading ?? 0)
    }

    private var radius: String { String(Int(maxSnapDistance.rounded())) }

    /// One GET of `service` over `coordinates`, its `Ok` answer decoded, or the seam's error.
    private func get<Answer: Decodable>(
        _ service: String, _ coordinates: [Coordinate], _ options: [String]
    ) async throws(RoadRoutingError) -> Answer {
        let path = coordinates.map { "\(Self.format($0.lng)),\(Self.format($0.lat))" }.joined(separator: ";")
        let text =
            baseURL.absoluteString.trimmingSuffix("/") + "/\(service)/v1/\(profile)/\(path)?"
            + options.joined(separator: "&")
        guard let url = URL(string: text) else { throw .unavailable("cannot make an OSRM URL from \(text)") }
        let response: HTTPClientResponse
        do {
            response = try await client.send(
                HTTPClientRequest(url: url, headers: ["Accept": "application/json"], timeout: timeout))
        } catch HTTPClientError.timedOut {
            throw .unavailable("OSRM at \(baseURL.absoluteString) did not answer within \(timeout)")
        } catch let HTTPClientError.network(detail) {
            throw .unavailable("OSRM at \(baseURL.absoluteString) is not reachable: \(detail)")
        } catch {
            throw .unavailable("OSRM at \(baseURL.absoluteString) failed: \(error)")
        }
        let decoder = JSONDecoder()
        if response.status == 200, let answer = try? decoder.decode(Answer.self, from: response.body),
            (try? decoder.decode(OSRMWire.Status.self, from: response.body))?.code == "Ok"
        {
            return answer
        }
        guard let status = try? decoder.decode(OSRMWire.Status.self, from: response.body) else {
            throw .unavailable(
                "OSRM at \(baseURL.absoluteString) answered \(response.status) with a body that is not OSRM's JSON")
        }
        switch status.code {
        case "NoSegment":
            // "Could not find a matching segment for coordinate N": the index is the last word.
            let index = status.message.flatMap { $0.split(separator: " ").last.flatMap { Int($0) } } ?? 0
            throw .noSegment(index: index)
        case "NoRoute", "NoTable": throw .noRoute
        default:
            throw .unavailable(
                "OSRM at \(baseURL.absoluteString) answered \(response.status) \(status.code): \(status.message ?? "")")
        }
    }

    private static func format(_ value: Double) -> String { String(format: "%.6f", value) }

    /// A heading as OSRM's whole degrees in 0..<360.
    static func degrees(_ heading: Double) -> Int { ((Int(heading.rounded()) % 360) + 360) % 360 }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}

/// The parts of OSRM's JSON that `OSRMRoadRouting` reads.
enum OSRMWire {
    struct Status: Decodable { var code: String; var message: String? }

    struct Location: Decodable {
        var lng: Double, lat: Double
        var coordinate: Coordinate { Coordinate(lat: lat, lng: lng) }
        init(from decoder: any Decoder) throws {
            var c = try decoder.unkeyedContainer()
            lng = try c.decode(Double.self); lat = try c.decode(Double.self)
        }
    }

    struct Waypoint: Decodable {
        var name: String?
        var distance: Double?
        var location: Location
        func waypoint(bearing: Double) -> RoadWaypoint {
            RoadWaypoint(
                location: location.coordinate, name: name ?? "", distanceMeters: distance ?? 0, bearing: bearing)
        }
    }

    struct Maneuver: Decodable {
        var type: String
        var modifier: String?
        var location: Location
        var bearing_before: Int
        var bearing_after: Int
        var exit: Int?
    }

    struct Step: Decodable {
        var name: String
        var distance: Double
        var duration: Double
        var maneuver: Maneuver
    }

    struct Leg: Decodable { var steps: [Step] }

    struct RouteBody: Decodable {
        var distance: Double
        var duration: Double
        var geometry: String?
        var legs: [Leg]
    }

    struct Route: Decodable { var routes: [RouteBody]?; var waypoints: [Waypoint]? }
    struct Table: Decodable { var durations: [[Double?]]?; var distances: [[Double?]]? }
    struct Nearest: Decodable { var waypoints: [Waypoint]? }
}
