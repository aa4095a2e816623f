import HTTPEngine
import EnRouteDomain
import EnRouteModels

extension EnRouteAPI {
    /// The merchant's orders: accepting with a preparation time, marking ready, and the paged list.
    func addMerchantRoutes(_ r: inout Router) {
        r.post(
            APIPath.Template.merchantOrderAccept,
            limited(
                .steps,
                idempotency.wrap(.optional, render: snapshotRender()) { req in
                    let account = try auth.account(for: req, roles: [.merchant])
                    let id = try req.parameter("id")
                    let body = try req.decode(MerchantAcceptRequest.self)
                    guard (1...240).contains(body.preparationMinutes) else {
                        throw HTTPError.invalid("/preparationMinutes", "must be between 1 and 240")
                    }
                    return (
                        account,
                        { ctx in
                            try await service.move(
                                id, .merchantAccept(preparationMinutes: body.preparationMinutes), by: account,
                                idempotency: ctx)
                        }
                    )
                }))
        r.post(
            APIPath.Template.merchantOrderReady,
            limited(
                .steps,
                idempotency.wrap(.optional, render: snapshotRender()) { req in
                    let account = try auth.account(for: req, roles: [.merchant])
                    let id = try req.parameter("id")
                    return (
                        account, { ctx in try await service.move(id, .merchantReady, by: account, idempotency: ctx) }
                    )
                }))
        r.get(APIPath.Template.merchantOrders) { req in
            let account = try auth.account(for: req, roles: [.merchant])
            let page = try ListPage(req.query, defaultLimit: 50)
            return try .json(
                ListPage.list(
                    service.trips(.merchantActive(merchantId: account.id), after: page.cursor, limit: page.limit), wire)
            )
        }
    }
}
