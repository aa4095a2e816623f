public import EnRouteModels

/// A `RoadRouting` that answers on the caller's thread without suspending (EnRoute's own graph): the HTTP layer
/// runs its queries in the engine's synchronous handlers and skips the hop to a task.
public protocol ImmediateRoadRouting: RoadRouting {
    /// `route`, computed on the caller's thread.
    func routeNow(from: Coordinate, to: Coordinate, heading: Double?) throws(RoadRoutingError) -> RoadLeg
    /// `routeSummary`, computed on the caller's thread.
    func routeSummaryNow(from: Coordinate, to: Coordinate, heading: Double?) throws(RoadRoutingError) -> RoadLeg
    /// `table`, computed on the caller's thread.
    func tableNow(sources: [Coordinate], destinations: [Coordinate]) throws(RoadRoutingError) -> [[RoadCost?]]
    /// `nearest`, computed on the caller's thread.
    func nearestNow(_ coordinate: Coordinate, heading: Double?) throws(RoadRoutingError) -> RoadWaypoint
}

extension ImmediateRoadRouting {
    /// The full route with its geometry and steps dropped, for engines that cannot leave them out.
    public func routeSummaryNow(from: Coordinate, to: Coordinate, heading: Double?) throws(RoadRoutingError) -> RoadLeg
    {
        try routeNow(from: from, to: to, heading: heading).summary
    }
}
