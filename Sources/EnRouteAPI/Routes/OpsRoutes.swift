import Foundation
import HTTPEngine
import EnRouteDomain
import EnRouteModels

extension EnRouteAPI {
    /// Operations: the paged trip list, the dispatch override and problem reports.
    func addOpsRoutes(_ r: inout Router) {
        r.get(APIPath.Template.opsTrips) { req in
            _ = try auth.account(for: req, roles: [.ops])
            let state = req.query["state"].flatMap { $0.isEmpty ? nil : $0 }
            if let state, TripState(rawValue: state) == nil, DeliveryStatus(rawValue: state) == nil {
                throw HTTPError.invalid("/state", "is not a trip state")
            }
            let page = try ListPage(req.query, defaultLimit: ListPage.maxLimit)
            return try .json(
                ListPage.list(service.trips(.all(status: state), after: page.cursor, limit: page.limit), wire))
        }
        // The ops override of dispatch: hands a waiting trip to a provider, in the change log as ops.
        r.post(
            APIPath.Template.opsTripAssign,
            limited(
                .steps,
                idempotency.wrap(.optional, render: snapshotRender()) { req in
                    let account = try auth.account(for: req, roles: [.ops])
                    let id = try req.parameter("id")
                    let body = try req.decode(AssignRequest.self)
                    let provider = body.providerId.trimmingCharacters(in: .whitespaces)
                    guard !provider.isEmpty, provider.count <= 128 else {
                        throw HTTPError.invalid("/providerId", "must be 1 to 128 characters")
                    }
                    return (
                        account,
                        { ctx in
                            let trip = try await service.move(
                                id, .assignProvider(provider), by: account, idempotency: ctx)
                            overrides(
                                OpsOverride(opsId: account.id, tripId: id, providerId: provider, reason: body.reason))
                            return trip
                        }
                    )
                }))
        r.post(
            APIPath.Template.opsTripProblem,
            limited(
                .steps,
                idempotency.wrap(.optional, render: snapshotRender()) { req in
                    let account = try auth.account(for: req, roles: [.ops])
                    let id = try req.parameter("id")
                    let body = try req.decode(ProblemReport.self)
                    let move: TripMove = body.message.map { .reportProblem($0) } ?? .clearProblem
                    return (account, { ctx in try await service.move(id, move, by: account, idempotency: ctx) })
                }))
    }

    private func overrides(_ override: OpsOverride) {
        metrics.increment(
            "enroute_ops_overrides_total", labels: ["kind": "assign"], help: "Trips ops assigned outside dispatch.")
        onOverride(override)
    }
}
