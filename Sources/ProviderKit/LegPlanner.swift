public import EnRouteModels
import HTTPTransport

/// The path a simulated provider (`enroute drive`) drives for one leg: the server's road route to the trip's next
/// stop when it has one, else the scripted line through the given waypoints.
public struct LegPlanner: Sendable {
    /// Where a leg's path came from.
    public enum Source: Sendable, Equatable {
        /// The server's road route.
        case road(ProviderRoute)
        /// The scripted line, and why the road route was not used.
        case scripted(reason: String)
    }

    /// One leg: the path to drive and where it came from.
    public struct Leg: Sendable, Equatable {
        /// The points driven, from the current position to the stop.
        public let path: ScriptedRoute
        /// The road route, or why there was none.
        public let source: Source
    }

    private let routes: any RouteFetching

    /// A planner asking `routes` (`GET /v1/provider/trips/{id}/route`).
    public init(routes: any RouteFetching) {
        self.routes = routes
    }

    /// The leg of `trip` from `position` (facing `heading`) to `stop` at `destination`: the road route from the
    /// server, framed by the position and the stop themselves, or `scripted` (the position, the waypoints, the
    /// destination) when the server has no road network, cannot route, or still routes to another stop.
    public func leg(
        trip: String, from position: Coordinate, heading: Double?, to stop: RouteStop, at destination: Coordinate,
        scripted waypoints: [Coordinate] = []
    ) async -> Leg {
        let fallback = ScriptedRoute([position] + waypoints + [destination])
        let route: ProviderRoute
        do {
            route = try await routes.route(trip: trip, from: position, heading: heading)
        } catch let error as APIError where error.status == 503 {
            return Leg(path: fallback, source: .scripted(reason: "the server has no road network"))
        } catch {
            return Leg(path: fallback, source: .scripted(reason: "no road route (\(error))"))
        }
        guard route.stop == stop else {
            return Leg(
                path: fallback,
                source: .scripted(
                    reason: "the server routes to the \(route.stop.rawValue), not the \(stop.rawValue), yet"))
        }
        var points = route.geometry
        guard !points.isEmpty else {
            return Leg(path: fallback, source: .scripted(reason: "the server's route has no geometry"))
        }
        // The road starts and ends where the points snapped; drive from the car and on to the stop's own pin.
        if points[0].distance(to: position) > 1 { points.insert(position, at: 0) }
        if points[points.count - 1].distance(to: destination) > 1 { points.append(destination) }
        return Leg(path: ScriptedRoute(points), source: .road(route))
    }
}
