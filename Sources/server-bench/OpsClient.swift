import Foundation
import EnRouteAPI
import EnRouteDomain
import EnRouteModels
import HTTPEngine

/// The ops bench's client: requests straight into the router, as the apps send them, with tokens signed once.
struct OpsClient {
    static let provider = "p1"
    static let pickup = #"{"lat":60.1699,"lng":24.9384}"#
    static let dropoff = #"{"lat":60.1841,"lng":24.9497}"#
    static let basket = #""merchantId":"m1","items":[{"sku":"coffee","quantity":2}],"destination":\#(dropoff)"#
    static let directory = StaticDirectory(merchants: [
        Merchant(
            id: "m1", name: "Kamppi Kitchen", address: "Simonkatu 8, 00100 Helsinki",
            position: Coordinate(lat: 60.16949, lng: 24.93752),
            openingHours: OpeningHours.days.map { OpeningHours(day: $0, opens: "00:00", closes: "24:00") },
            catalogue: [
                CatalogueItem(sku: "coffee", name: "Filter coffee", price: Money(amountMinor: 350, currency: "EUR"))
            ]
        )
    ])

    /// What the setup left for the counted requests.
    struct Prepared {
        /// Each order's tracking path (built here: the counted loop only sends it) and its customer.
        var orders: [(path: String, customer: String)] = []
        var rides: [(body: String, customer: String)] = []
        var batches: [String] = []
    }

    let router: Router
    let auth: Authenticator
    let clock: SteppedTime
    private let tokens = TokenCache()

    /// `count` customers with a card, an order each and a ride quote each; a provider online on an assigned ride;
    /// `count` location batch bodies.
    func prepare(_ count: Int, fixes: Int) async throws -> Prepared {
        var prepared = Prepared()
        for c in 0..<count {
            let customer = "c\(c)"
            try await expect(
                201, "POST", APIPath.paymentMethods, as: customer,
                body: #"{"token":"pm_card_visa","makeDefault":true}"#,
                also: [200])
            let quote = try await field(
                "quoteId", expect(200, "POST", APIPath.orderQuote, as: customer, body: "{\(Self.basket)}"))
            let order = try await expect(
                201, "POST", APIPath.orders, as: customer, body: #"{\#(Self.basket),"quoteId":"\#(quote)"}"#,
                headers: ["Idempotency-Key": "order-key-\(c)"])
            prepared.orders.append((APIPath.orderTracking(try field("orderId", order)), customer))
            prepared.rides.append((try await rideBody(for: customer), customer))
            clock.step(1)
        }
        try await expect(
            200, "POST", APIPath.paymentMethods, as: "rider", body: #"{"token":"pm_card_visa","makeDefault":true}"#,
            also: [201])
        try await expect(
            200, "POST", APIPath.providerAvailability, as: Self.provider,
            body: #"{"online":true,"position":\#(Self.pickup)}"#)
        let ride = try await expect(
            201, "POST", APIPath.trips, as: "rider", body: try await rideBody(for: "rider"),
            headers: ["Idempotency-Key": "ride-key-0"])
        try await expect(
            200, "POST", APIPath.opsTripAssign(try field("id", ride)), as: "ops",
            body: #"{"providerId":"\#(Self.provider)"}"#)
        prepared.batches = (0..<count).map { batch($0, fixes: fixes, from: clock.now) }
        return prepared
    }

    /// Location batch `b`: `fixes` fixes a second apart, driving north at 11 m/s from the pickup; the clock moves to
    /// just after its last fix before it is sent.
    @discardableResult
    func send(batch b: Int, body: String, fixes: Int, from start: Date) async throws -> [UInt8] {
        clock.set(start.addingTimeInterval(Double((b + 1) * fixes) + 1))
        return try await expect(200, "POST", APIPath.providerLocations, as: Self.provider, body: body)
    }

    private func batch(_ b: Int, fixes: Int, from start: Date) -> String {
        let format = ISO8601DateFormatter()
        let list = (0..<fixes).map { j in
            let n = b * fixes + j
            let at = format.string(from: start.addingTimeInterval(Double(n + 1)))
            return #"{"lat":\#(60.1699 + Double(n) * 0.0001),"lng":24.9384,"heading":0,"speed":11,"accuracy":5,"#
                + #""recordedAt":"\#(at)"}"#
        }
        return #"{"batchId":"b\#(b)","fixes":[\#(list.joined(separator: ","))]}"#
    }

    private func rideBody(for customer: String) async throws -> String {
        let estimates = try await expect(
            200, "POST", APIPath.estimates, as: customer,
            body: #"{"pickup":\#(Self.pickup),"dropoff":\#(Self.dropoff)}"#)
        let list = (try? JSONSerialization.jsonObject(with: Data(estimates))) as? [[String: Any]]
        guard let quote = list?.first(where: { $0["productID"] as? String == "economy" })?["quoteId"] as? String else {
            throw FanoutBench.Failure(description: "estimates: no economy quote")
        }
        return #"{"pickup":\#(Self.pickup),"dropoff":\#(Self.dropoff),"productID":"economy","quoteId":"\#(quote)"}"#
    }

    /// Sends a request as `account` (its role from its name) and returns the body when the status is `status` (or
    /// one of `also`).
    @discardableResult
    func expect(
        _ status: Int, _ method: String, _ path: String, as account: String, body: String? = nil,
        headers: [String: String] = [:], also: [Int] = []
    ) async throws -> [UInt8] {
        var h = HTTPHeaders(headers.map { ($0.key, $0.value) })
        h.add("Authorization", try tokens.authorization(account, auth))
        if body != nil { h.add("Content-Type", "application/json") }
        let response = await router.respond(
            to: HTTPRequest(method: method, path: path, headers: h, body: body.map { Array($0.utf8) } ?? []))
        guard response.status == status || also.contains(response.status) else {
            let text = String(decoding: response.bodyBytes.prefix(300), as: UTF8.self)
            throw FanoutBench.Failure(description: "\(method) \(path): \(response.status) \(text)")
        }
        return response.bodyBytes
    }

    private func field(_ name: String, _ body: [UInt8]) throws -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let value = object[name] as? String
        else {
            throw FanoutBench.Failure(description: "no \(name) in \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
        return value
    }
}

/// `Authorization` values signed once per account: the bench counts the server's work, not the signing.
final class TokenCache: @unchecked Sendable {
    private var values: [String: String] = [:]
    private let lock = NSLock()

    func authorization(_ account: String, _ auth: Authenticator) throws -> String {
        try lock.withLock {
            if let value = values[account] { return value }
            let role: Party = account == "ops" ? .ops : account.hasPrefix("p") ? .provider : .customer
            let value = "Bearer " + (try auth.token(account: account, role: role))
            values[account] = value
            return value
        }
    }
}
