import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import TestSupport

/// Text with U+0000 is refused where it enters, 422 naming it, before anything is stored: PostgreSQL would keep the
/// string cut at the NUL where SQLite keeps it whole.
@Suite struct NULTextTests {
    func pointer(_ body: [UInt8]) -> String? {
        let problem = try? JSONDecoder().decode(Problem.self, from: Data(body))
        return problem?.errors?.first?.pointer
    }

    @Test func aJSONBodyWithNULIsRefusedNamingTheField() async throws {
        let backend = TestBackend()
        let ops = backend.token("ops", .ops)
        let merchant = #"""
            {"name":"Bakery\u0000","address":"Runeberginkatu 40","position":{"lat":60.18,"lng":24.925},
             "openingHours":[{"day":"mon","opens":"07:00","closes":"18:00"}],
             "catalogue":[{"sku":"rye-loaf","name":"Rye loaf","price":{"amountMinor":450,"currency":"EUR"}}]}
            """#
        let refused = await backend.call("PUT", "/v1/ops/merchants/m7", token: ops, json: merchant)
        #expect(refused.status == 422 && pointer(refused.body) == "/name")
        #expect(await backend.call("GET", "/v1/ops/merchants/m7", token: ops).status == 404, "nothing stored")
    }

    @Test func aChatMessageWithNULIsRefusedOverHTTPAndOverTheSocket() async throws {
        let backend = TestBackend()
        let ride = try await backend.requestRide("c1")
        #expect(await backend.assign(ride.id, to: "p1").status == 200)
        let sent = await backend.call(
            "POST", "/v1/trips/\(ride.id)/messages", token: backend.token("c1", .customer),
            json: #"{"messageId":"m-1","text":"see you\u0000"}"#)
        #expect(sent.status == 422 && pointer(sent.body) == "/text")
        // A socket's frame is decoded by the chat itself: the policy refuses it there.
        #expect(throws: ChatError.nul) { try ChatPolicy().check("see you\u{0}") }
    }
}
