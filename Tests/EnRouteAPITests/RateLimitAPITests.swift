import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import HTTPEngine
import TestSupport

@Suite struct RateLimitAPITests {
    func makeSUT(_ limits: RateLimits = .standard) -> TestBackend { TestBackend(rateLimits: limits) }

    /// Places an order for `customer` with `body`, or with a fresh quote of its own (quotes and cards are not creates).
    func placeOrder(
        _ backend: TestBackend, _ customer: String = "c1", key: String = UUID().uuidString,
        body: String? = nil
    ) async throws -> (status: Int, headers: HTTPHeaders, body: [UInt8]) {
        let json: String
        if let body { json = body } else { json = try await backend.orderBody(customer) }
        return await backend.call(
            "POST", "/v1/orders", token: backend.token(customer, .customer), json: json,
            headers: ["Idempotency-Key": key])
    }

    @Test func theEleventhCreateInAMinuteIs429WithRetryAfterAndTheRateLimitFields() async throws {
        let backend = makeSUT()
        for i in 0..<10 {
            let r = try await placeOrder(backend)
            #expect(r.status == 201)
            #expect(r.headers["RateLimit-Limit"] == "10" && r.headers["RateLimit-Remaining"] == String(9 - i))
        }
        await backend.clock.advance(by: .seconds(1))
        let retried = try await backend.orderBody("c1")
        let refused = try await placeOrder(backend, key: "retried-after-429", body: retried)
        #expect(refused.status == 429)
        #expect(refused.headers["Content-Type"] == "application/problem+json")
        #expect(refused.headers["Retry-After"] == "5")
        #expect(refused.headers["RateLimit-Limit"] == "10")
        #expect(refused.headers["RateLimit-Remaining"] == "0")
        #expect(refused.headers["RateLimit-Reset"] == "59")
        #expect(refused.headers["RateLimit-Policy"] == "10;w=60")
        let problem = try WireCoding.decoder().decode(Problem.self, from: Data(refused.body))
        #expect(problem.status == 429 && problem.title == "Too Many Requests")
        #expect(problem.type == "https://enroute.invalid/problems/rate-limited")
        #expect(problem.detail == "Too many creates requests from this account: at most 10 per 60 s. Retry in 5 s.")

        // The 429 was not stored under the key: the same request, once allowed, is done for the first time.
        await backend.clock.advance(by: .seconds(5))
        let after = try await placeOrder(backend, key: "retried-after-429", body: retried)
        #expect(after.status == 201)
        #expect(after.headers["Idempotent-Replayed"] == nil)
        #expect(after.headers["RateLimit-Remaining"] == "0")
    }

    @Test func ridesAndOrdersShareTheCreatesAllowance() async throws {
        let backend = makeSUT()
        for _ in 0..<10 { #expect(try await placeOrder(backend).status == 201) }
        let ride = await backend.call(
            "POST", "/v1/trips", token: backend.token("c1", .customer), json: try await backend.rideBody("c1"),
            headers: ["Idempotency-Key": UUID().uuidString])
        #expect(ride.status == 429)
    }

    @Test func limitsArePerAccount() async throws {
        let backend = makeSUT()
        for _ in 0..<11 { _ = try await placeOrder(backend, "c1") }
        #expect(try await placeOrder(backend, "c1").status == 429)
        let other = try await placeOrder(backend, "c2")
        #expect(other.status == 201)
        #expect(other.headers["RateLimit-Remaining"] == "9")
    }

    @Test func classesHaveTheirOwnAllowances() async throws {
        let backend = makeSUT()
        // Each basket is quoted first, and a quote is an estimate: 11 of the 60 go there, none to the creates.
        var bodies: [String] = []
        for _ in 0..<11 { bodies.append(try await backend.orderBody("c1")) }
        for body in bodies { _ = try await placeOrder(backend, body: body) }
        let estimate = await backend.call(
            "POST", "/v1/estimates", token: backend.token("c1", .customer),
            json: #"{"pickup":\#(TestBackend.pickup),"dropoff":\#(TestBackend.dropoff)}"#)
        #expect(estimate.status == 200)
        #expect(estimate.headers["RateLimit-Limit"] == "60" && estimate.headers["RateLimit-Remaining"] == "48")
    }

    /// An answer the handler refuses still counts and still carries the fields.
    @Test func aRefusedRequestCountsAndCarriesTheFields() async throws {
        let backend = makeSUT(RateLimits([.locations: RateLimit(2, per: .seconds(60))]))
        let token = backend.token("p1", .provider)
        let bad = await backend.call(
            "POST", "/v1/provider/locations", token: token, json: #"{"batchId":"","fixes":[]}"#)
        #expect(bad.status == 422)
        #expect(bad.headers["RateLimit-Remaining"] == "1")
        let good = await backend.call(
            "POST", "/v1/provider/locations", token: token, json: #"{"batchId":"b1","fixes":[]}"#)
        #expect(good.status == 200 && good.headers["RateLimit-Remaining"] == "0")
        let refused = await backend.call(
            "POST", "/v1/provider/locations", token: token, json: #"{"batchId":"b2","fixes":[]}"#)
        #expect(refused.status == 429 && refused.headers["Retry-After"] == "30")
    }

    @Test func aRequestWithoutAValidTokenIs401AndTakesNothing() async throws {
        let backend = makeSUT(RateLimits([.creates: RateLimit(1, per: .seconds(60))]))
        let body = try await backend.orderBody("c1")
        for token in [nil, "forged"] {
            let r = await backend.call(
                "POST", "/v1/orders", token: token, json: body, headers: ["Idempotency-Key": UUID().uuidString])
            #expect(r.status == 401)
            #expect(r.headers["RateLimit-Limit"] == nil)
        }
        #expect(try await placeOrder(backend).status == 201)
    }

    @Test func readsAreNotLimited() async throws {
        let backend = makeSUT(
            RateLimits([.creates: RateLimit(1, per: .seconds(60)), .steps: RateLimit(1, per: .seconds(60))]))
        let order = try await placeOrder(backend)
        let id = try #require(json(order.body)["orderId"] as? String)
        for _ in 0..<50 {
            let r = await backend.call("GET", "/v1/orders/\(id)/tracking", token: backend.token("c1", .customer))
            #expect(r.status == 200 && r.headers["RateLimit-Limit"] == nil)
        }
    }

    /// The document lists 429 on exactly the routes that answer with the `RateLimit-*` fields, and the chat's own
    /// limit.
    @Test func theDocumentLists429OnExactlyTheLimitedRoutes() async throws {
        let backend = makeSUT(
            RateLimits(
                Dictionary(
                    uniqueKeysWithValues: RateLimitClass.allCases.map { ($0, RateLimit(100, per: .seconds(60))) })))
        var limited: Set<String> = []
        for route in OpenAPICoverageTests.registeredRoutes {
            let r = await backend.call(
                route.method, OpenAPICoverageTests.samplePath(route.path), token: backend.token("someone", .customer),
                json: "{}")
            if r.headers["RateLimit-Limit"] != nil { limited.insert(route.description) }
        }
        // 16, the two directory PUTs (ops writes, class steps), the three payment method writes, and money's five
        // writes (basket quote, tip, rating, balance settle, basket change), and the contact routes' three (phone
        // number, call, upload creation)
        #expect(limited.count == 29)
        // Besides them, a chat message has a limit of its own per party (ChatPolicy's bucket), answered with
        // Retry-After alone.
        #expect(
            Self.operationsWith429(in: try OpenAPICoverageTests.documentText())
                == limited.union(["POST /v1/trips/{id}/messages"]))
    }

    /// `METHOD /path` of each operation in the document whose responses include `'429'`.
    static func operationsWith429(in text: String) -> Set<String> {
        var found: Set<String> = []
        var path = "", method = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("components:") { break }
            if line.hasPrefix("  /"), line.hasSuffix(":") { path = String(line.dropFirst(2).dropLast()) }
            if line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                method = line.dropFirst(4).dropLast().uppercased()
            }
            if line == "        '429':" { found.insert("\(method) \(path)") }
        }
        return found
    }

    /// Every limited route, with its class at one request a minute: the first passes the limiter (whatever
    /// the handler then says), the second is refused.
    @Test(arguments: [
        ("POST", "/v1/estimates", Party.customer, RateLimitClass.estimates),
        ("POST", "/v1/trips", .customer, .creates),
        ("POST", "/v1/orders", .customer, .creates),
        ("POST", "/v1/trips/T9/cancel", .customer, .steps),
        ("POST", "/v1/orders/T9/cancel", .customer, .steps),
        ("PUT", "/v1/orders/T9/live-activity-token", .customer, .steps),
        ("POST", "/v1/provider/trips/T9/accept", .provider, .steps),
        ("POST", "/v1/provider/availability", .provider, .steps),
        ("POST", "/v1/provider/offers/O9/accept", .provider, .steps),
        ("POST", "/v1/provider/offers/O9/decline", .provider, .steps),
        ("POST", "/v1/provider/trips/T9/steps", .provider, .steps),
        ("POST", "/v1/provider/locations", .provider, .locations),
        ("POST", "/v1/merchant/orders/T9/accept", .merchant, .steps),
        ("POST", "/v1/merchant/orders/T9/ready", .merchant, .steps),
        ("POST", "/v1/ops/trips/T9/problem", .ops, .steps),
        ("POST", "/v1/payment-methods", .customer, .steps),
        ("DELETE", "/v1/payment-methods/card_9", .customer, .steps),
        ("POST", "/v1/payment-methods/card_9/default", .customer, .steps),
    ])
    func eachLimitedRouteIsUnderItsClass(method: String, path: String, role: Party, kind: RateLimitClass) async {
        let backend = makeSUT(RateLimits([kind: RateLimit(1, per: .seconds(60))]))
        let token = backend.token("someone", role)
        let first = await backend.call(method, path, token: token, json: "{}")
        #expect(first.status != 429)
        #expect(first.headers["RateLimit-Limit"] == "1")
        #expect(await backend.call(method, path, token: token, json: "{}").status == 429)
    }
}
