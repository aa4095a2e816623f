import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteSandbox
import HTTPEngine
import TestSupport
import Synchronization

/// `/v1/payment-methods` through the production router: masked lists, the default's rules, ownership, and the token's
/// checks.
@Suite struct PaymentMethodAPITests {
    func add(
        _ backend: TestBackend, _ token: String, makeDefault: Bool? = nil, as customer: String = "c1"
    )
        async -> (status: Int, headers: HTTPHeaders, body: [UInt8])
    {
        let body = makeDefault.map { #"{"token":"\#(token)","makeDefault":\#($0)}"# } ?? #"{"token":"\#(token)"}"#
        return await backend.call("POST", APIPath.paymentMethods, token: backend.token(customer, .customer), json: body)
    }

    func added(
        _ backend: TestBackend, _ token: String, makeDefault: Bool? = nil, as customer: String = "c1"
    ) async throws -> PaymentMethodSummary {
        let r = await add(backend, token, makeDefault: makeDefault, as: customer)
        guard r.status == 201 else {
            throw Failure("add \(token): \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        }
        return try WireCoding.decoder().decode(PaymentMethodSummary.self, from: Data(r.body))
    }

    func list(
        _ backend: TestBackend, as customer: String = "c1"
    ) async throws -> (methods: [PaymentMethodSummary], raw: String) {
        let r = await backend.call("GET", APIPath.paymentMethods, token: backend.token(customer, .customer))
        guard r.status == 200 else { throw Failure("list: \(r.status)") }
        return (
            try WireCoding.decoder().decode(PaymentMethodList.self, from: Data(r.body)).methods,
            String(decoding: r.body, as: UTF8.self)
        )
    }

    @Test func aSavedMethodIsListedMaskedAndItsTokenIsNeverReturned() async throws {
        let backend = TestBackend()
        let r = await add(backend, "pm_card_visa")
        #expect(r.status == 201)
        #expect(!String(decoding: r.body, as: UTF8.self).contains("pm_"))
        let saved = try WireCoding.decoder().decode(PaymentMethodSummary.self, from: Data(r.body))
        #expect(
            saved.brand == "visa" && saved.last4 == "4242" && saved.expMonth == 12 && saved.expYear == 2034
                && saved.isDefault)
        _ = try await added(backend, "pm_card_mastercard")
        let (methods, raw) = try await list(backend)
        #expect(methods.map(\.last4) == ["4242", "4444"] && methods.map(\.brand) == ["visa", "mastercard"])
        #expect(!raw.contains("pm_") && !raw.contains("token"))
        // Another customer sees none of them.
        #expect(try await list(backend, as: "c2").methods.isEmpty)
    }

    @Test func theFirstMethodIsTheDefaultAndMakeDefaultOrTheDefaultRouteMovesIt() async throws {
        let backend = TestBackend()
        let visa = try await added(backend, "pm_card_visa")
        let mastercard = try await added(backend, "pm_card_mastercard")
        #expect(visa.isDefault && !mastercard.isDefault)
        let third = try await added(backend, "pm_card_chargeCustomerFail", makeDefault: true)
        #expect(third.isDefault)
        #expect(try await list(backend).methods.filter(\.isDefault).map(\.id) == [third.id])

        let r = await backend.call(
            "POST", APIPath.paymentMethodDefault(mastercard.id), token: backend.token("c1", .customer))
        #expect(r.status == 200)
        #expect(
            try WireCoding.decoder().decode(PaymentMethodSummary.self, from: Data(r.body))
                == PaymentMethodSummary(
                    id: mastercard.id, brand: "mastercard", last4: "4444", expMonth: 12, expYear: 2034, isDefault: true)
        )
        #expect(try await list(backend).methods.filter(\.isDefault).map(\.id) == [mastercard.id])
        #expect(try await backend.backend.paymentMethods.defaultMethod(for: "c1")?.token == "pm_card_mastercard")
    }

    @Test func removingTheDefaultMakesTheNewestRemainingMethodTheDefault() async throws {
        let backend = TestBackend()
        let visa = try await added(backend, "pm_card_visa")
        let mastercard = try await added(backend, "pm_card_mastercard")
        let newest = try await added(backend, "pm_card_chargeCustomerFail")
        let r = await backend.call("DELETE", APIPath.paymentMethod(visa.id), token: backend.token("c1", .customer))
        #expect(r.status == 204 && r.body.isEmpty)
        let methods = try await list(backend).methods
        #expect(methods.map(\.id) == [mastercard.id, newest.id])
        #expect(methods.filter(\.isDefault).map(\.id) == [newest.id])
        // Removing a method that is not the default leaves the default alone.
        #expect(
            await backend.call("DELETE", APIPath.paymentMethod(mastercard.id), token: backend.token("c1", .customer))
                .status == 204)
        #expect(try await list(backend).methods.map(\.isDefault) == [true])
        // Removed: gone.
        #expect(
            await backend.call("DELETE", APIPath.paymentMethod(visa.id), token: backend.token("c1", .customer)).status
                == 404)
    }

    @Test func savingTheSameTokenAgainReturnsTheSavedMethod() async throws {
        let backend = TestBackend()
        let first = try await added(backend, "pm_card_visa")
        _ = try await added(backend, "pm_card_mastercard")
        let again = await add(backend, "pm_card_visa")
        #expect(again.status == 200)
        #expect(try WireCoding.decoder().decode(PaymentMethodSummary.self, from: Data(again.body)) == first)
        #expect(try await list(backend).methods.count == 2)
        // Saved again with makeDefault: the saved method, now the default.
        let promoted = await add(backend, "pm_card_mastercard", makeDefault: true)
        #expect(promoted.status == 200)
        #expect(try WireCoding.decoder().decode(PaymentMethodSummary.self, from: Data(promoted.body)).isDefault)
        #expect(try await list(backend).methods.map(\.isDefault) == [false, true])
        // The same token for another customer is that customer's own method.
        #expect(try await added(backend, "pm_card_visa", as: "c2").id != first.id)
    }

    @Test func anotherAccountsMethodIsNotFound() async throws {
        let backend = TestBackend()
        let mine = try await added(backend, "pm_card_visa")
        let other = backend.token("c2", .customer)
        for (method, path) in [
            ("DELETE", APIPath.paymentMethod(mine.id)), ("POST", APIPath.paymentMethodDefault(mine.id)),
        ] {
            let r = await backend.call(method, path, token: other)
            #expect(r.status == 404, "\(method) \(path)")
            #expect(r.headers["Content-Type"] == "application/problem+json")
        }
        #expect(try await list(backend).methods == [mine])
    }

    static let malformedTokens = [
        "tok_visa", "pm_", "pm_card-visa", "pm_card visa", "pm_card_visa\u{00e9}", "4242424242424242", "",
        "pm_" + String(repeating: "a", count: 253),
    ]

    @Test func aTokenThatIsMalformedOrUnknownToTheGatewayIs422NamingTheToken() async throws {
        let backend = TestBackend()
        for token in ["pm_card_unknown"] + Self.malformedTokens {
            let r = await add(backend, token)
            #expect(r.status == 422, "\(token)")
            #expect(r.headers["Content-Type"] == "application/problem+json", "\(token)")
            let errors = json(r.body)["errors"] as? [[String: Any]]
            #expect(errors?.first?["pointer"] as? String == "/token", "\(token)")
        }
        #expect(try await list(backend).methods.isEmpty)
    }

    /// The shape is checked before the gateway is asked: a gateway that would describe anything never sees these.
    @Test func aMalformedTokenIsRefusedWithoutAskingTheGateway() async throws {
        let gateway = DescribingGateway()
        let backend = TestBackend(payments: gateway)
        for token in Self.malformedTokens {
            let r = await add(backend, token)
            #expect(r.status == 422, "\(token)")
            #expect((json(r.body)["errors"] as? [[String: Any]])?.first?["pointer"] as? String == "/token", "\(token)")
        }
        #expect(gateway.described() == 0)
        #expect(await add(backend, "pm_card_whatever").status == 201)
        #expect(gateway.described() == 1)
    }

    @Test func aGatewayThatDoesNotAnswerIs503AndSavesNothing() async throws {
        let sandbox = SandboxGateway(
            baseURL: URL(string: "http://enroute.test")!, ids: SequentialIDGenerator(prefix: ""), now: { .distantPast })
        let backend = TestBackend(payments: sandbox)
        sandbox.failNext(.describe, afterApplying: false)
        let r = await add(backend, "pm_card_visa")
        #expect(
            r.status == 503 && r.headers["Retry-After"] != nil
                && r.headers["Content-Type"] == "application/problem+json")
        #expect(try await list(backend).methods.isEmpty)
        #expect(await add(backend, "pm_card_visa").status == 201)
    }

    @Test func anAccountKeepsAtMostTenMethods() async throws {
        let backend = TestBackend(payments: DescribingGateway())
        for i in 1...PaymentMethods.limit { _ = try await added(backend, "pm_card_\(i)") }
        let r = await add(backend, "pm_card_11")
        #expect(r.status == 422 && r.headers["Content-Type"] == "application/problem+json")
        #expect((json(r.body)["detail"] as? String)?.contains("at most 10 payment methods") == true)
        #expect(try await list(backend).methods.count == 10)
        // A token already saved is still answered, and a freed place can be used.
        #expect(await add(backend, "pm_card_3").status == 200)
        let first = try #require(try await list(backend).methods.first)
        #expect(
            await backend.call("DELETE", APIPath.paymentMethod(first.id), token: backend.token("c1", .customer)).status
                == 204)
        #expect(await add(backend, "pm_card_11").status == 201)
    }

    @Test func onlyCustomersHavePaymentMethods() async throws {
        let backend = TestBackend()
        let mine = try await added(backend, "pm_card_visa")
        for role in [Party.provider, .merchant, .ops] {
            let token = backend.token("x1", role)
            let calls = [
                await backend.call("GET", APIPath.paymentMethods, token: token),
                await backend.call("POST", APIPath.paymentMethods, token: token, json: #"{"token":"pm_card_visa"}"#),
                await backend.call("DELETE", APIPath.paymentMethod(mine.id), token: token),
                await backend.call("POST", APIPath.paymentMethodDefault(mine.id), token: token),
            ]
            #expect(calls.map(\.status) == [403, 403, 403, 403], "\(role)")
        }
        #expect(await backend.call("GET", APIPath.paymentMethods, token: nil).status == 401)
        #expect(try await list(backend).methods == [mine])
    }
}

/// A gateway that describes any token as a visa card ending in 4242 and fails every payment call: for the limit test,
/// which needs more distinct tokens than Stripe has test cards.
private final class DescribingGateway: PaymentGateway {
    let name = "describing"
    private let calls = Mutex(0)
    /// How many tokens were described.
    func described() -> Int { calls.withLock { $0 } }
    func describe(token: String) async throws(PaymentGatewayError) -> CardDetails {
        calls.withLock { $0 += 1 }
        return CardDetails(brand: "visa", last4: "4242", expMonth: 1, expYear: 2030)
    }
    func authorize(_ request: AuthorizationRequest) async throws(PaymentGatewayError) -> GatewayIntent {
        throw unexpected()
    }
    func retrieve(intentId: String) async throws(PaymentGatewayError) -> GatewayIntent { throw unexpected() }
    func capture(
        intentId: String, amountMinor: Int, idempotencyKey: String
    ) async throws(PaymentGatewayError) -> GatewayIntent { throw unexpected() }
    func cancel(intentId: String, idempotencyKey: String) async throws(PaymentGatewayError) -> GatewayIntent {
        throw unexpected()
    }
    func charge(_ request: AuthorizationRequest) async throws(PaymentGatewayError) -> GatewayIntent {
        throw unexpected()
    }
    private func unexpected(_ function: String = #function) -> PaymentGatewayError {
        Issue.record("unexpected gateway call \(function)")
        return .rejected("unexpected")
    }
}
