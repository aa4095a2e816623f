public import EnRouteDomain

/// EnRoute's graph answers without suspending, so the OSRM-compatible endpoints run it in synchronous handlers.
extension LocalRoadRouting: ImmediateRoadRouting {}
