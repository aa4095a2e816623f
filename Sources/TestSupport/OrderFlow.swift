public import Foundation
public import EnRouteDomain
public import EnRouteAPI
public import EnRouteNotifications
import EnRouteAPNs
public import HTTPEngine
public import EnRouteBackend

/// A backend with the push planner observing it, and a delivery driven through the real API step by step.
public struct OrderFlow: Sendable {
    public let backend: TestBackend
    public let planner: OrderPushPlanner
    public let customer = "c1"
    public private(set) var orderId = ""
    private var step = 0

    public static let directory = StaticDirectory(
        merchants: [TestDirectory.helsinki.merchant(id: "m1")!],
        providers: [
            ProviderProfile(
                id: "r1", firstName: "Ana", photoURL: URL(string: "https://img.enroute.invalid/rider/12.jpg")!)
        ])

    public init(storage: BackendConfiguration.Storage = .memory, clock: ManualClock = ManualClock()) {
        backend = TestBackend(clock: clock, storage: storage, directory: Self.directory)
        planner = backend.backend.orderPushes
    }

    public var clock: ManualClock { backend.clock }

    /// Places an order as the customer.
    public mutating func place() async throws {
        let body = try await backend.orderBody(
            customer, items: #"[{"sku":"bread","quantity":1}]"#, destination: #"{"lat":60.17,"lng":24.94}"#)
        let r = await backend.call(
            "POST", "/v1/orders", token: backend.token(customer, .customer), json: body,
            headers: ["Idempotency-Key": UUID().uuidString])
        guard r.status == 201 else { throw Failure("place: \(String(decoding: r.body, as: UTF8.self))") }
        let object = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any]
        guard let id = object?["orderId"] as? String else { throw Failure("place: no orderId in the answer") }
        orderId = id
    }

    /// placed → picking (merchant accepts).
    public func accept() async throws {
        try await call("POST", "/v1/merchant/orders/\(orderId)/accept", "m1", .merchant, #"{"preparationMinutes":10}"#)
    }
    /// The rider takes the order and the merchant marks it ready.
    public func riderAndReady() async throws {
        try await call("POST", "/v1/ops/trips/\(orderId)/assign", "ops", .ops, #"{"providerId":"r1"}"#)
        try await call("POST", "/v1/merchant/orders/\(orderId)/ready", "m1", .merchant, nil)
    }
    /// A rider step: onTheWay, arriving, delivered.
    public mutating func riderStep(_ name: String) async throws {
        step += 1
        try await call(
            "POST", "/v1/provider/trips/\(orderId)/steps", "r1", .provider,
            #"{"changeId":"c\#(step)","step":"\#(name)","#
                + #""deviceTime":"\#(ISO8601DateFormatter().string(from: clock.date))","position":null}"#
        )
    }
    /// Ops reports a problem.
    public func problem(_ message: String) async throws {
        try await call("POST", "/v1/ops/trips/\(orderId)/problem", "ops1", .ops, #"{"message":"\#(message)"}"#)
    }
    /// The customer's app registers its Live Activity token.
    public func liveActivityToken(_ token: String) async throws {
        let r = await backend.call(
            "PUT", "/v1/orders/\(orderId)/live-activity-token", token: backend.token(customer, .customer),
            json: #"{"token":"\#(token)"}"#)
        guard r.status == 204 else { throw Failure("live activity token: \(r.status)") }
    }

    private func call(_ method: String, _ path: String, _ account: String, _ role: Party, _ json: String?) async throws
    {
        let r = await backend.call(method, path, token: backend.token(account, role), json: json)
        guard (200..<300).contains(r.status) else {
            throw Failure("\(path): \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        }
    }

    /// Every push job waiting in the outbox, oldest first.
    public func outbox() async throws -> [PushJob] {
        try await backend.store.dueOutbox(topic: PushJob.topic, now: .distantFuture, limit: 1000).map {
            try PushJob.decode($0.payload)
        }
    }
}
