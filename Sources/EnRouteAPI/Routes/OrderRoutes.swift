import HTTPEngine
import EnRouteDomain
import EnRouteModels

extension EnRouteAPI {
    /// The customer's order routes: placing, tracking, cancelling and following an order; the Live Activity token.
    func addOrderRoutes(_ r: inout Router) {
        r.post(
            APIPath.Template.orders,
            limited(
                .creates,
                idempotency.wrap(.required, render: orderRender(status: 201)) { req in
                    let account = try auth.account(for: req, roles: [.customer])
                    let body = try req.decode(PlaceOrderRequest.self)
                    return (account, { ctx in try await service.placeOrder(body, by: account, idempotency: ctx) })
                }))
        r.get(APIPath.Template.activeOrders) { req in
            let account = try auth.account(for: req, roles: [.customer])
            let now = service.currentTime()
            let orders = service.activeTrips(customer: account.id).filter { $0.kind == .delivery }.map {
                wire.tracking($0, now: now)
            }
            return try .json(ActiveOrdersDTO(orders: orders))
        }
        // The hot read path: answered from memory on the engine's thread, without a task hop.
        r.add(
            "GET", APIPath.Template.orderTracking,
            .sync { req in
                let account = try auth.account(for: req)
                let id = try req.parameter("id")
                return try map {
                    try service.withTrip(id, for: account) { trip in
                        guard trip.kind == .delivery else { throw HTTPError.notFound() }
                        return .jsonBytes(TrackingJSON.encode(wire.tracking(trip, now: service.currentTime())))
                    }
                }
            })
        r.put(
            APIPath.Template.orderLiveActivityToken,
            limited(.steps) { req in
                let account = try auth.account(for: req, roles: [.customer])
                let id = try req.parameter("id")
                let body = try req.decode(LiveActivityTokenRequest.self)
                _ = try trip(id, account, kind: .delivery)
                try await mapAsync { try await service.setLiveActivityToken(body.token, order: id, by: account) }
                return .empty(204)
            })
        addCancelAndEvents(
            &r, kind: .delivery, cancel: APIPath.Template.orderCancel, events: APIPath.Template.orderEvents,
            render: orderRender(status: 200),
            defaultReason: "Cancelled by you")
    }

    /// A stored answer in the order tracker's tracking shape.
    func orderRender(status: Int) -> @Sendable (Result<TripRecord, TripError>) -> StoredResponse {
        { [wire, service] result in
            switch result {
            case .success(let trip):
                return StoredResponse(
                    status: status, contentType: "application/json",
                    body: TrackingJSON.encode(wire.tracking(trip, now: service.currentTime())))
            case .failure(let error):
                return APIErrors.stored(APIErrors.httpError(error) { wire.tracking($0, now: service.currentTime()) })
            }
        }
    }
}
