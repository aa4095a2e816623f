import HTTPEngine
import EnRouteDomain
import EnRouteModels

extension EnRouteAPI {
    /// The cancel route and the live stream (`GET …/{id}/events`), alike for rides and orders.
    func addCancelAndEvents(
        _ r: inout Router, kind: TripKind, cancel: String, events: String,
        render: @escaping @Sendable (Result<TripRecord, TripError>) -> StoredResponse,
        defaultReason: String
    ) {
        r.post(
            cancel,
            limited(
                .steps,
                idempotency.wrap(.optional, render: render) { req in
                    let account = try auth.account(for: req, roles: [.customer, .ops])
                    let id = try req.parameter("id")
                    let reason = req.body.isEmpty ? nil : try req.decode(CancelRequest.self).reason
                    _ = try trip(id, account, kind: kind)
                    return (
                        account,
                        { ctx in
                            try await service.move(
                                id, .cancel(reason: reason ?? defaultReason), by: account, idempotency: ctx)
                        }
                    )
                }))
        r.get(events) { req in
            let account = try auth.account(for: req)
            let id = try req.parameter("id")
            let current = try trip(id, account, kind: kind)
            // A browser's EventSource reconnects after every close; once it has the final state, 204
            // tells it to stop (HTML's SSE processing model) instead of replaying the end forever.
            if !current.status.isActive, !req.isWebSocketUpgrade,
                let last = req.headers["Last-Event-ID"], let seen = Self.version(ofEventID: last),
                seen >= current.version
            {
                return .empty(204)
            }
            return liveStreams.stream(req, trip: current, for: account)
        }
    }
}
