import Foundation
import Testing
import EnRouteDomain
import EnRouteBackend
import EnRouteModels
import TestSupport

/// The ops directory endpoints, and the order and ride paths reading what they write.
@Suite struct DirectoryAPITests {
    static let merchantBody = #"""
        {"name":"Töölö Bakery","address":"Runeberginkatu 40, 00260 Helsinki","position":{"lat":60.1800,"lng":24.9250},
         "openingHours":[{"day":"mon","opens":"07:00","closes":"18:00"}],
         "catalogue":[{"sku":"rye-loaf","name":"Rye loaf","price":{"amountMinor":450,"currency":"EUR"}}]}
        """#
    static let providerBody = #"""
        {"firstName":"Mikko","lastName":"Korhonen","vehicle":{"model":"Toyota Corolla","plate":"ZKL-123"},"rating":4.8,
         "photoURL":"https://photos.enroute.invalid/providers/driver-1.jpg"}
        """#

    static func pointer(_ body: [UInt8]) -> String? {
        (json(body)["errors"] as? [[String: Any]])?.first?["pointer"] as? String
    }

    @Test(arguments: [
        ("GET", "/v1/ops/merchants"), ("GET", "/v1/ops/merchants/m1"), ("PUT", "/v1/ops/merchants/m9"),
        ("GET", "/v1/ops/providers"), ("GET", "/v1/ops/providers/p1"), ("PUT", "/v1/ops/providers/p1"),
    ])
    func onlyOpsReachTheDirectory(method: String, path: String) async throws {
        let backend = TestBackend()
        let body = path.contains("merchants") ? Self.merchantBody : Self.providerBody
        let anonymous = await backend.call(method, path, token: nil, json: method == "PUT" ? body : nil)
        #expect(anonymous.status == 401 && anonymous.headers["Content-Type"] == "application/problem+json")
        for role in [Party.customer, .provider, .merchant] {
            let r = await backend.call(
                method, path, token: backend.token("x1", role), json: method == "PUT" ? body : nil)
            #expect(r.status == 403, "\(role)")
            #expect(r.headers["Content-Type"] == "application/problem+json")
        }
    }

    @Test func aMerchantIsCreatedThenReplacedAndIsOrderableAtOnce() async throws {
        let backend = TestBackend()
        let ops = backend.token("ops-1", .ops)
        #expect(await backend.call("GET", "/v1/ops/merchants/m7", token: ops).status == 404)
        let created = await backend.call("PUT", "/v1/ops/merchants/m7", token: ops, json: Self.merchantBody)
        #expect(created.status == 201)
        let merchant = try WireCoding.decoder().decode(Merchant.self, from: Data(created.body))
        #expect(
            merchant.id == "m7" && merchant.catalogue.map(\.sku) == ["rye-loaf"]
                && merchant.catalogue[0].price.amountMinor == 450)
        #expect(await backend.call("PUT", "/v1/ops/merchants/m7", token: ops, json: Self.merchantBody).status == 200)
        let read = await backend.call("GET", "/v1/ops/merchants/m7", token: ops)
        #expect(read.status == 200)
        #expect(try WireCoding.decoder().decode(Merchant.self, from: Data(read.body)) == merchant)
        // The order path reads the same directory: the new merchant sells its item, and only that.
        let order = try await backend.orderBody(
            "c1", merchantId: "m7", items: #"[{"sku":"rye-loaf","quantity":1}]"#,
            destination: #"{"lat":60.18,"lng":24.95}"#)
        let placed = await backend.call(
            "POST", "/v1/orders", token: backend.token("c1", .customer), json: order,
            headers: ["Idempotency-Key": UUID().uuidString])
        #expect(placed.status == 201)
        let trip = try #require(try backend.store.trips(status: nil, limit: 10).first)
        #expect(trip.pickup == merchant.position && trip.merchantId == "m7")
    }

    @Test func anUnknownMerchantOrProviderIs404Problem() async throws {
        let backend = TestBackend()
        for path in ["/v1/ops/merchants/nope", "/v1/ops/providers/nope"] {
            let r = await backend.call("GET", path, token: backend.token("ops-1", .ops))
            #expect(r.status == 404 && r.headers["Content-Type"] == "application/problem+json", "\(path)")
        }
    }

    @Test(arguments: [
        ("/v1/ops/merchants/m7", #"{"address":"x","position":{"lat":60,"lng":24}}"#, "/name"),
        ("/v1/ops/merchants/m7", #"{"name":" ","address":"x","position":{"lat":60,"lng":24}}"#, "/name"),
        ("/v1/ops/merchants/m7", #"{"name":"a","address":"x","position":{"lat":91,"lng":24}}"#, "/position/lat"),
        (
            "/v1/ops/merchants/m7",
            #"{"name":"a","address":"x","position":{"lat":60,"lng":24},"openingHours":[{"day":"fun","opens":"07:00","#
                + #""closes":"08:00"}]}"#,
            "/openingHours/0/day"
        ),
        (
            "/v1/ops/merchants/m7",
            #"{"name":"a","address":"x","position":{"lat":60,"lng":24},"openingHours":[{"day":"mon","opens":"09:00","#
                + #""closes":"08:00"}]}"#,
            "/openingHours/0/closes"
        ),
        (
            "/v1/ops/merchants/m7",
            #"{"name":"a","address":"x","position":{"lat":60,"lng":24},"catalogue":[{"sku":"s","name":"n","#
                + #""price":{"amountMinor":-1,"currency":"EUR"}}]}"#,
            "/catalogue/0/price/amountMinor"
        ),
        (
            "/v1/ops/merchants/m7",
            #"{"name":"a","address":"x","position":{"lat":60,"lng":24},"catalogue":[{"sku":"s","name":"n","#
                + #""price":{"amountMinor":1,"currency":"eur"}}]}"#,
            "/catalogue/0/price/currency"
        ),
        (
            "/v1/ops/merchants/m7",
            #"{"name":"a","address":"x","position":{"lat":60,"lng":24},"catalogue":[{"sku":"s","name":"n","#
                + #""price":{"amountMinor":1,"currency":"EUR"}},{"sku":"s","name":"n","price":{"amountMinor":1,"#
                + #""currency":"EUR"}}]}"#,
            "/catalogue/1/sku"
        ),
        ("/v1/ops/merchants/m%20x", #"{"name":"a","address":"x","position":{"lat":60,"lng":24}}"#, "/id"),
        ("/v1/ops/providers/p1", #"{"photoURL":"https://x.invalid/p.jpg"}"#, "/firstName"),
        ("/v1/ops/providers/p1", #"{"firstName":"A","rating":7,"photoURL":"https://x.invalid/p.jpg"}"#, "/rating"),
        ("/v1/ops/providers/p1", #"{"firstName":"A","photoURL":"ftp://x.invalid/p.jpg"}"#, "/photoURL"),
        (
            "/v1/ops/providers/p1",
            #"{"firstName":"A","vehicle":{"model":"Golf","plate":""},"photoURL":"https://x.invalid/p.jpg"}"#,
            "/vehicle/plate"
        ),
    ])
    func aBadDirectoryWriteIs422NamingTheFieldAndChangesNothing(
        path: String, body: String, pointer: String
    ) async throws {
        let backend = TestBackend()
        let r = await backend.call("PUT", path, token: backend.token("ops-1", .ops), json: body)
        #expect(r.status == 422)
        #expect(r.headers["Content-Type"] == "application/problem+json")
        #expect(Self.pointer(r.body) == pointer)
        #expect(
            backend.backend.directory.merchant(id: "m7") == nil
                && backend.backend.directory.storedProvider(id: "p1") == nil)
    }

    @Test(arguments: [BackendConfiguration.Storage.memory, .sqlite(path: "")])
    func theMerchantListPagesByCursor(storage: BackendConfiguration.Storage) async throws {
        var storage = storage
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-dirapi-\(UUID().uuidString)")
        if case .sqlite = storage {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            storage = .sqlite(path: dir.appendingPathComponent("enroute.sqlite").path)
        }
        defer { try? FileManager.default.removeItem(at: dir) }
        let backend = TestBackend(storage: storage)
        let ops = backend.token("ops-1", .ops)
        let first = await backend.call("GET", "/v1/ops/merchants?limit=2", token: ops)
        #expect(first.status == 200)
        let page1 = json(first.body)
        #expect((page1["merchants"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["m1", "m2"])
        let cursor = try #require(page1["nextCursor"] as? String)
        let page2 = json(await backend.call("GET", "/v1/ops/merchants?limit=2&cursor=\(cursor)", token: ops).body)
        #expect((page2["merchants"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["m3"])
        #expect(page2["nextCursor"] == nil)
        #expect(Self.pointer(await backend.call("GET", "/v1/ops/merchants?limit=0", token: ops).body) == "/limit")
        let bad = await backend.call("GET", "/v1/ops/merchants?cursor=%21%21", token: ops)
        #expect(bad.status == 422 && Self.pointer(bad.body) == "/cursor")
        #expect(Self.pointer(await backend.call("GET", "/v1/ops/providers?limit=201", token: ops).body) == "/limit")
    }

    @Test func theProviderListPagesByCursor() async throws {
        let backend = TestBackend()
        let ops = backend.token("ops-1", .ops)
        for id in ["d3", "d1", "d2"] {
            #expect(
                await backend.call("PUT", "/v1/ops/providers/\(id)", token: ops, json: Self.providerBody).status == 201)
        }
        let page1 = json(await backend.call("GET", "/v1/ops/providers?limit=2", token: ops).body)
        #expect((page1["providers"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["d1", "d2"])
        let cursor = try #require(page1["nextCursor"] as? String)
        let page2 = json(await backend.call("GET", "/v1/ops/providers?cursor=\(cursor)", token: ops).body)
        #expect(
            (page2["providers"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["d3"]
                && page2["nextCursor"] == nil)
    }

    @Test func theRidersDriverComesFromTheStoredProfile() async throws {
        let backend = TestBackend()
        #expect(
            await backend.call(
                "PUT", "/v1/ops/providers/driver-1", token: backend.token("ops-1", .ops), json: Self.providerBody
            ).status == 201)
        let ride = try await backend.requestRide()
        #expect(await backend.assign(ride.id, to: "driver-1").status == 200)
        let r = await backend.call("GET", "/v1/trips/\(ride.id)", token: backend.token("c1", .customer))
        let trip = try WireCoding.decoder().decode(Trip.self, from: Data(r.body))
        #expect(
            trip.driver
                == Driver(
                    id: "driver-1", name: "Mikko K.", carModel: "Toyota Corolla", plate: "ZKL-123", rating: 4.8,
                    photoURL: URL(string: "https://photos.enroute.invalid/providers/driver-1.jpg")!))
    }

    @Test(arguments: [
        (
            #"{"merchantId":"m1","items":[{"sku":"coffee","quantity":1},{"sku":"caviar","quantity":1}],"#
                + #""destination":{"lat":60.18,"lng":24.95}}"#,
            "/items/1/sku"
        ),
        (
            #"{"merchantId":"m2","items":[{"sku":"coffee","quantity":1}],"destination":{"lat":60.18,"lng":24.95}}"#,
            "/items/0/sku"
        ),
        (
            #"{"merchantId":"m404","items":[{"sku":"coffee","quantity":1}],"destination":{"lat":60.18,"lng":24.95}}"#,
            "/merchantId"
        ),
    ])
    func anOrderFromAnUnknownMerchantOrForAnUnknownSKUIs422(body: String, pointer: String) async throws {
        let backend = TestBackend()
        let r = await backend.call(
            "POST", "/v1/orders", token: backend.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": UUID().uuidString])
        #expect(r.status == 422 && r.headers["Content-Type"] == "application/problem+json")
        #expect(Self.pointer(r.body) == pointer)
        #expect(try backend.store.trips(status: nil, limit: 10).isEmpty)
    }
}
