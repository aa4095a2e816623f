import Foundation
import Testing
import EnRouteDomain
import EnRouteSandbox
import EnRouteModels
import EnRouteNotifications
import HTTPEngine
import TestSupport
import Synchronization

/// "Neither party learns the other's phone number." A ride and a delivery are driven through their whole lives with
/// both parties' real numbers given; at every stage every GET path the API has is asked as the customer, the provider
/// and ops, and every answer, every live event the trip's watchers get, every push and every log line is scanned for
/// the other party's number (in E.164 and as bare digits).
@Suite struct PhoneNumberPrivacyTests {
    static let customer = TripCallTests.customerNumber
    static let provider = TripCallTests.providerNumber

    /// What the scan collected, by who could read it.
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var texts: [(reader: String, where: String, text: String)] = []
        func add(_ reader: String, _ place: String, _ bytes: [UInt8]) {
            add(reader, place, String(decoding: bytes, as: UTF8.self))
        }
        func add(_ reader: String, _ place: String, _ text: String) {
            lock.withLock { texts.append((reader, place, text)) }
        }
        var all: [(reader: String, where: String, text: String)] { lock.withLock { texts } }
    }

    final class CapturingPushes: PushGateway, @unchecked Sendable {
        let seen: Seen
        init(_ seen: Seen) { self.seen = seen }
        func send(_ push: APNsPush) async -> PushOutcome {
            seen.add("push", "push \(push.collapseID ?? "")", push.payload); return .delivered
        }
    }

    @Test func noAnswerEventPushOrLogLineCarriesTheOtherPartysNumber() async throws {
        let seen = Seen()
        let relay = LogTelephonyRelay(pool: TripCallTests.pool, log: .lines { seen.add("log", "relay log", $0) })
        let backend = TestBackend(
            push: CapturingPushes(seen), telephony: relay, log: .lines { seen.add("log", "server log", $0) })
        backend.service.hub.onPublish { trips in
            for trip in trips {
                let wire = backend.api.wire, now = backend.clock.date
                seen.add(
                    "customer", "event \(trip.id) v\(trip.version)",
                    (try? WireCoding.encoder().encode(wire.ride(trip, now: now))).map(Array.init) ?? [])
                seen.add(
                    "customer", "event \(trip.id) v\(trip.version)",
                    (try? WireCoding.encoder().encode(wire.tracking(trip, now: now))).map(Array.init) ?? [])
                seen.add(
                    "provider", "event \(trip.id) v\(trip.version)",
                    (try? WireCoding.encoder().encode(wire.snapshot(trip))).map(Array.init) ?? [])
            }
        }
        #expect(await backend.setPhone("c1", .customer, Self.customer) == 200)
        #expect(await backend.setPhone("p1", .provider, Self.provider) == 200)
        let device =
            #"{"platform":"ios","environment":"production","appVersion":"4.2.0","#
            + #""publicKey":"\#(Data(repeating: 7, count: 32).base64EncodedString())"}"#
        #expect(
            await backend.call(
                "PUT", APIPath.device(String(repeating: "ab", count: 32)), token: backend.token("c1", .customer),
                json: device
            ).status == 204)
        #expect(
            await backend.call(
                "PUT", APIPath.device(String(repeating: "cd", count: 32)), token: backend.token("p1", .provider),
                json: device
            ).status == 204)

        /// Every GET path, filled with `tripId`, as each reader; then the pushes due.
        func sweep(_ tripId: String, _ stage: String) async throws {
            for (reader, role) in [("c1", Party.customer), ("p1", .provider), ("ops", .ops)] {
                for template in APIPath.Template.all + APIPath.Template.pages where !template.hasSuffix("/events") {
                    let path = APIPath.parameters(of: template).reduce(template) { path, name in
                        path.replacingOccurrences(
                            of: "{\(name)}", with: ["id": tripId, "token": "x", "file": "leaflet.js"][name] ?? "x")
                    }
                    let query = template.hasSuffix("/route") && template.contains("provider") ? "?from=60.17,24.94" : ""
                    let r = await backend.call("GET", path + query, token: backend.token(reader, role))
                    seen.add(reader, "GET \(path) (\(stage))", r.body)
                }
            }
            try await backend.backend.sender.drain()
        }
        func record(_ reader: String, _ label: String, _ r: (status: Int, body: [UInt8])) {
            seen.add(reader, label, r.body)
        }
        func record(_ reader: String, _ label: String, _ r: (status: Int, headers: HTTPHeaders, body: [UInt8])) {
            seen.add(reader, label, r.body)
        }

        // A ride, start to end, with calls from both sides and the money after.
        let ride = try await backend.requestRide()
        try await sweep(ride.id, "requested")
        record("ops", "assign", await backend.assign(ride.id, to: "p1"))
        record(
            "customer", "call",
            await backend.call("POST", APIPath.tripCall(ride.id), token: backend.token("c1", .customer)))
        record(
            "provider", "call",
            await backend.call("POST", APIPath.tripCall(ride.id), token: backend.token("p1", .provider)))
        try await sweep(ride.id, "assigned")
        for step in ["driverArrived", "onTrip", "completed"] {
            record("provider", "step \(step)", await backend.step(ride.id, step))
        }
        try await backend.settlePayments()
        record(
            "customer", "rating",
            await backend.call(
                "POST", APIPath.tripRating(ride.id), token: backend.token("c1", .customer), json: #"{"stars":5}"#))
        record(
            "provider", "rating",
            await backend.call(
                "POST", APIPath.tripRating(ride.id), token: backend.token("p1", .provider), json: #"{"stars":5}"#))
        record(
            "customer", "tip",
            await backend.call(
                "POST", APIPath.tripTip(ride.id), token: backend.token("c1", .customer), json: #"{"amountMinor":200}"#,
                headers: ["Idempotency-Key": "tip-1"]))
        try await sweep(ride.id, "completed")

        // A delivery with its proof.
        let order = try await backend.placeOrder()
        let merchant = backend.token("m1", .merchant)
        record("ops", "assign", await backend.assign(order.orderId, to: "p1"))
        record(
            "customer", "call",
            await backend.call("POST", APIPath.tripCall(order.orderId), token: backend.token("c1", .customer)))
        _ = await backend.call(
            "POST", APIPath.merchantOrderAccept(order.orderId), token: merchant, json: #"{"preparationMinutes":5}"#)
        _ = await backend.call("POST", APIPath.merchantOrderReady(order.orderId), token: merchant)
        record("provider", "step onTheWay", await backend.step(order.orderId, "onTheWay"))
        try await sweep(order.orderId, "on the way")
        let location = try await backend.createUpload(
            order.orderId, length: ProofUploadTests.png.count, proofId: "privacy-proof")
        record("provider", "patch", await backend.patch(location, offset: 0, ProofUploadTests.png))
        record("provider", "step delivered", await backend.step(order.orderId, "delivered", proofId: "privacy-proof"))
        record(
            "provider", "call after",
            await backend.call("POST", APIPath.tripCall(order.orderId), token: backend.token("p1", .provider)))
        try await sweep(order.orderId, "delivered")

        let all = seen.all
        #expect(all.count > 400, "the sweep reached \(all.count) answers, events, pushes and log lines")
        #expect(all.contains { $0.where.hasPrefix("push") }, "pushes went out and were scanned")
        #expect(
            all.contains { $0.where == "GET /v1/trips/\(ride.id) (assigned)" && $0.text.contains("driverAssigned") },
            "the sweep read real answers")
        #expect(
            all.contains {
                $0.where.hasPrefix("GET /v1/orders/\(order.orderId)/tracking") && $0.text.contains("onTheWay")
            })
        #expect(all.contains { $0.text.contains(TripCallTests.pool[0].e164) }, "the proxy number was handed out")
        for item in all {
            // Only a party's own number may come back to them (GET /v1/account/phone); nobody else's, anywhere.
            let forbidden: [String] =
                switch item.reader {
                case "c1", "customer": [Self.provider]
                case "p1", "provider": [Self.customer]
                default: [Self.customer, Self.provider]
                }
            for number in forbidden {
                #expect(
                    !item.text.contains(number) && !item.text.contains(number.dropFirst()),
                    "\(item.reader) could read \(number) in \(item.where)")
            }
        }
    }
}
