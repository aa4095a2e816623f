import Foundation
import Testing
import HTTPTransport
import CurlTransport
import EnRouteModels
import EnRouteAPI
import TestSupport

/// The real `enroute serve`: links and the console's cookie follow `--public-url`, or where the server listens, never
/// the Host a request names.
@Suite(.serialized) struct PublicURLTests {
    static let auth = Authenticator(secret: DurabilityTests.secret, now: { Date() })

    /// A share link for a fresh order of c1's, asked for with `Host: evil.example`.
    func shareLink(_ server: DurabilityTests.Server) async throws -> String {
        let http = CurlHTTPClient(defaultTimeout: .seconds(5)), port = server.port
        let customer = try Self.auth.token(account: "c1", role: .customer)
        let card = try await DurabilityTests.call(
            http, port: port, token: customer, "POST", "/v1/payment-methods",
            json: #"{"token":"pm_card_visa"}"#)
        #expect(card.status == 201)
        let body = try #require(try await DurabilityTests.quotedOrder(http, port: port, token: customer))
        let created = try await DurabilityTests.call(
            http, port: port, token: customer, "POST", "/v1/orders",
            json: body, key: UUID().uuidString)
        let order = try created.decode(TrackingDTO.self)
        let url = URL(string: "http://127.0.0.1:\(port)/v1/orders/\(order.orderId)/share")!
        let request = HTTPClientRequest(
            method: "POST", url: url,
            headers: ["Authorization": "Bearer \(customer)", "Host": "evil.example"])
        let shared = try await http.send(request)
        #expect(shared.status == 201)
        let object = try JSONSerialization.jsonObject(with: shared.body) as? [String: Any]
        return try #require(object?["url"] as? String)
    }

    func withServer(_ arguments: [String], _ body: (DurabilityTests.Server) async throws -> Void) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-public-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let database = dir.appendingPathComponent("e.sqlite").path
        let server = try DurabilityTests.Server(database: database, arguments: arguments)
        defer { server.stop() }
        try await body(server)
    }

    @Test func withoutAPublicURLALinkPointsWhereTheServerListens() async throws {
        try await withServer([]) { server in
            let url = try await shareLink(server)
            #expect(url.hasPrefix("http://127.0.0.1:\(server.port)/share/"), "\(url)")
        }
    }

    @Test func withAnHTTPSPublicURLLinksPointThereAndTheConsoleCookieIsSecure() async throws {
        try await withServer(["--public-url", "https://track.example.com"]) { server in
            let url = try await shareLink(server)
            #expect(url.hasPrefix("https://track.example.com/share/"), "\(url)")
            let ops = try Self.auth.token(account: "ops1", role: .ops)
            let session = try await DurabilityTests.call(
                CurlHTTPClient(defaultTimeout: .seconds(5)), port: server.port,
                token: ops, "POST", "/ops/session")
            #expect(session.status == 204)
            let cookie = session.headers.first { $0.key.lowercased() == "set-cookie" }?.value
            #expect(cookie?.hasSuffix("; Secure") == true, "\(cookie ?? "no cookie")")
        }
    }
}
