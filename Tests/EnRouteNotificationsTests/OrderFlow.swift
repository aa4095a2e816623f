import Foundation
import Testing
import EnRouteDomain
import EnRouteAPI
import EnRouteNotifications
import EnRouteAPNs
import HTTPEngine
import TestSupport
import EnRouteBackend

/// A backend with the push planner observing it, and a delivery driven through the real API step by step.
struct OrderFlow {
    let backend: TestBackend
    let planner: OrderPushPlanner
    let customer = "c1"
    private(set) var orderId = ""
    private var step = 0

    static let directory = StaticDirectory(
        merchants: [TestDirectory.helsinki.merchant(id: "m1")!],
        providers: [
            ProviderProfile(
                id: "r1", firstName: "Ana", photoURL: URL(string: "https://img.enroute.invalid/rider/12.jpg")!)
        ])

    init(storage: BackendConfiguration.Storage = .memory, clock: ManualClock = ManualClock()) {
        backend = TestBackend(clock: clock, storage: storage, directory: Self.directory)
        planner = backend.backend.orderPushes
    }

    var clock: ManualClock { backend.clock }

    /// Places an order as the customer.
    mutating func place() async throws {
        let body = try await backend.orderBody(
            customer, items: #"[{"sku":"bread","quantity":1}]"#, destination: #"{"lat":60.17,"lng":24.94}"#)
        let r = await backend.call(
            "POST", "/v1/orders", token: backend.token(customer, .customer), json: body,
            headers: ["Idempotency-Key": UUID().uuidString])
        try #require(r.status == 201, "place: \(String(decoding: r.body, as: UTF8.self))")
        let object = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any]
        orderId = try #require(object?["orderId"] as? String)
    }

    /// placed → picking (merchant accepts).
    func accept() async throws {
        try await call("POST", "/v1/merchant/orders/\(orderId)/accept", "m1", .merchant, #"{"preparationMinutes":10}"#)
    }
    /// The rider takes the order and the merchant marks it ready.
    func riderAndReady() async throws {
        try await call("POST", "/v1/ops/trips/\(orderId)/assign", "ops", .ops, #"{"providerId":"r1"}"#)
        try await call("POST", "/v1/merchant/orders/\(orderId)/ready", "m1", .merchant, nil)
    }
    /// A rider step: onTheWay, arriving, delivered.
    mutating func riderStep(_ name: String) async throws {
        step += 1
        try await call(
            "POST", "/v1/provider/trips/\(orderId)/steps", "r1", .provider,
            #"{"changeId":"c\#(step)","step":"\#(name)","#
                + #""deviceTime":"\#(ISO8601DateFormatter().string(from: clock.date))","position":null}"#
        )
    }
    /// Ops reports a problem.
    func problem(_ message: String) async throws {
        try await call("POST", "/v1/ops/trips/\(orderId)/problem", "ops1", .ops, #"{"message":"\#(message)"}"#)
    }
    /// The customer's app registers its Live Activity token.
    func liveActivityToken(_ token: String) async throws {
        let r = await backend.call(
            "PUT", "/v1/orders/\(orderId)/live-activity-token", token: backend.token(customer, .customer),
            json: #"{"token":"\#(token)"}"#)
        try #require(r.status == 204)
    }

    private func call(_ method: String, _ path: String, _ account: String, _ role: Party, _ json: String?) async throws
    {
        let r = await backend.call(method, path, token: backend.token(account, role), json: json)
        try #require((200..<300).contains(r.status), "\(path): \(r.status) \(String(decoding: r.body, as: UTF8.self))")
    }

    /// Every push job waiting in the outbox, oldest first.
    func outbox() async throws -> [PushJob] {
        try await backend.store.dueOutbox(topic: PushJob.topic, now: .distantFuture, limit: 1000).map {
            try PushJob.decode($0.payload)
        }
    }
}
