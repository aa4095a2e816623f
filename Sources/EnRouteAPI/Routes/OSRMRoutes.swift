import Foundation
import HTTPEngine
import EnRouteDomain
import EnRouteModels

extension EnRouteAPI {
    /// OSRM's HTTP API (`/route/v1`, `/table/v1`, `/nearest/v1`) over the server's roads, public like
    /// osrm-routed, with OSRM's shapes and OSRM's `{code, message}` refusals (their contract, not problem+json).
    /// EnRoute's own graph answers in synchronous handlers; an external router in async ones. Without a road
    /// network they answer 404 (problem+json).
    func addOSRMRoutes(_ r: inout Router) {
        let service = OSRMService(roads: roads)
        for name in OSRMService.Name.allCases {
            let pattern = "/\(name.rawValue)/v1/{profile}/{coordinates}"
            if roads is any ImmediateRoadRouting {
                r.add("GET", pattern, .sync { req in try service.answerNow(name, req) })
            } else {
                r.add("GET", pattern, .async { req in try await service.answer(name, req) })
            }
            // What osrm-routed cannot parse as service/version/profile/coordinates it refuses as InvalidUrl.
            for incomplete in ["/\(name.rawValue)", "/\(name.rawValue)/v1", "/\(name.rawValue)/v1/{profile}"] {
                r.add(
                    "GET", incomplete,
                    .sync { req in
                        OSRMService.refusal(
                            OSRMFailure(
                                code: "InvalidUrl",
                                message: "URL string malformed close to position \(max(1, req.path.utf8.count - 1))"))
                    })
            }
            r.add(
                "GET", "/\(name.rawValue)/{version}/{profile}/{coordinates}",
                .sync { _ in
                    OSRMService.refusal(
                        OSRMFailure(code: "InvalidVersion", message: "Service \(name.rawValue) not found!"))
                })
        }
    }
}

/// Runs the OSRM-compatible queries: parses the request, asks the roads, renders the answer.
struct OSRMService: Sendable {
    /// The three services, by their URL names.
    enum Name: String, CaseIterable, Sendable { case route, table, nearest }

    let roads: (any RoadRouting)?

    private static let noRoads = HTTPError.notFound(
        "This server has no road network: start it with --graph FILE or --router osrm --osrm-url URL.")

    static func refusal(_ failure: OSRMFailure) -> HTTPResponse {
        .jsonBytes(OSRMResponses.failure(failure), status: failure.status)
    }

    private static func ok(_ bytes: [UInt8]) -> HTTPResponse { .jsonBytes(bytes) }

    /// A road error as OSRM's refusal, or 503 (problem+json) when the engine itself failed.
    private static func mapped(_ error: RoadRoutingError, offset: Int = 0) -> any Error {
        if let failure = OSRMResponses.failure(error, coordinateOffset: offset) { return failure }
        if case .unavailable(let detail) = error {
            return HTTPError.unavailable(retryAfterSeconds: 1, detail: "The road router is unavailable: \(detail)")
        }
        return HTTPError.internalError
    }

    /// The answer on EnRoute's own graph, computed on the caller's thread.
    func answerNow(_ name: Name, _ req: HTTPRequest) throws -> HTTPResponse {
        guard let roads = roads as? any ImmediateRoadRouting else { throw Self.noRoads }
        do {
            switch name {
            case .route:
                let query = try OSRMQueryParser.route(
                    path: req.path, segment: try req.parameter("coordinates"), query: req.query)
                var legs: [RoadLeg] = []
                legs.reserveCapacity(query.coordinates.count - 1)
                // Neither geometry nor steps asked for: the router skips building them.
                let summaryOnly = query.overview == .none && !query.steps
                for i in 0..<(query.coordinates.count - 1) {
                    do {
                        let (from, to, heading) = (query.coordinates[i], query.coordinates[i + 1], query.headings[i])
                        legs.append(
                            try summaryOnly
                                ? roads.routeSummaryNow(from: from, to: to, heading: heading)
                                : roads.routeNow(from: from, to: to, heading: heading))
                    } catch {
                        throw Self.mapped(error, offset: i)
                    }
                }
                return Self.ok(OSRMResponses.route(query, legs: legs))
            case .table:
                let query = try OSRMQueryParser.table(
                    path: req.path, segment: try req.parameter("coordinates"), query: req.query)
                let cells: [[RoadCost?]]
                do {
                    cells = try roads.tableNow(
                        sources: query.sources.map { query.coordinates[$0] },
                        destinations: query.destinations.map { query.coordinates[$0] })
                } catch {
                    throw Self.mapped(Self.tableIndex(error, query))
                }
                var waypoints: [RoadWaypoint]?
                if !query.skipWaypoints {
                    var snapped: [RoadWaypoint] = []
                    for (i, c) in query.coordinates.enumerated() {
                        do { snapped.append(try roads.nearestNow(c, heading: nil)) } catch {
                            throw Self.mapped(error, offset: i)
                        }
                    }
                    waypoints = snapped
                }
                return Self.ok(OSRMResponses.table(query, cells: cells, waypoints: waypoints))
            case .nearest:
                let query = try OSRMQueryParser.nearest(
                    path: req.path, segment: try req.parameter("coordinates"), query: req.query)
                do {
                    return Self.ok(
                        OSRMResponses.nearest(
                            query, waypoint: try roads.nearestNow(query.coordinate, heading: query.heading)))
                } catch {
                    throw Self.mapped(error)
                }
            }
        } catch let failure as OSRMFailure {
            return Self.refusal(failure)
        }
    }

    /// The answer through an external router (`--router osrm`), asked over its async API.
    func answer(_ name: Name, _ req: HTTPRequest) async throws -> HTTPResponse {
        guard let roads else { throw Self.noRoads }
        let departure = Date(timeIntervalSince1970: 0)
        do {
            switch name {
            case .route:
                let query = try OSRMQueryParser.route(
                    path: req.path, segment: try req.parameter("coordinates"), query: req.query)
                var legs: [RoadLeg] = []
                let summaryOnly = query.overview == .none && !query.steps
                for i in 0..<(query.coordinates.count - 1) {
                    do {
                        let (from, to, heading) = (query.coordinates[i], query.coordinates[i + 1], query.headings[i])
                        legs.append(
                            try await summaryOnly
                                ? roads.routeSummary(from: from, to: to, heading: heading, departure: departure)
                                : roads.route(from: from, to: to, heading: heading, departure: departure))
                    } catch {
                        throw Self.mapped(error, offset: i)
                    }
                }
                return Self.ok(OSRMResponses.route(query, legs: legs))
            case .table:
                let query = try OSRMQueryParser.table(
                    path: req.path, segment: try req.parameter("coordinates"), query: req.query)
                let cells: [[RoadCost?]]
                do {
                    cells = try await roads.table(
                        sources: query.sources.map { query.coordinates[$0] },
                        destinations: query.destinations.map { query.coordinates[$0] }, departure: departure)
                } catch {
                    throw Self.mapped(Self.tableIndex(error, query))
                }
                var waypoints: [RoadWaypoint]?
                if !query.skipWaypoints {
                    var snapped: [RoadWaypoint] = []
                    for (i, c) in query.coordinates.enumerated() {
                        do { snapped.append(try await roads.nearest(c, heading: nil)) } catch {
                            throw Self.mapped(error, offset: i)
                        }
                    }
                    waypoints = snapped
                }
                return Self.ok(OSRMResponses.table(query, cells: cells, waypoints: waypoints))
            case .nearest:
                let query = try OSRMQueryParser.nearest(
                    path: req.path, segment: try req.parameter("coordinates"), query: req.query)
                do {
                    return Self.ok(
                        OSRMResponses.nearest(
                            query, waypoint: try await roads.nearest(query.coordinate, heading: query.heading)))
                } catch {
                    throw Self.mapped(error)
                }
            }
        } catch let failure as OSRMFailure {
            return Self.refusal(failure)
        }
    }

    /// A table's `noSegment` index (sources, then destinations) as the index of the URL's coordinate.
    private static func tableIndex(_ error: RoadRoutingError, _ query: OSRMTableQuery) -> RoadRoutingError {
        guard case .noSegment(let index) = error else { return error }
        let coordinate =
            index < query.sources.count ? query.sources[index] : query.destinations[index - query.sources.count]
        return .noSegment(index: coordinate)
    }
}
