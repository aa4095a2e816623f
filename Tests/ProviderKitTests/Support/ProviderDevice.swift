import Foundation
import Testing
import HTTPTransport
import EnRouteModels
import ProviderKit
import TestSupport

/// One "process" of the provider's app: the store file opened, the outbox and its sync engine running.
/// `kill()` stops the engine and closes the file mid-run; a new device on the same path is the restarted app.
struct ProviderDevice {
    let store: ProviderStore
    let buffer: PointBuffer
    let outbox: StepOutbox
    let engine: StepSyncEngine
    let running: Task<Void, Never>

    init(
        path: String, client: any HTTPClient, server: APIServer, clock: ManualClock, ids: SequentialIDs,
        backoff: SyncBackoff = SyncBackoff(initial: .seconds(1), maximum: .seconds(8))
    ) throws {
        store = try ProviderStore(path: path)
        buffer = try PointBuffer(store: store, makeID: ids.maker)
        outbox = StepOutbox(store: store, positions: buffer, dates: clock.dates, makeID: ids.maker)
        engine = StepSyncEngine(
            outbox: outbox, api: RemoteProviderAPI(client: client, server: server), clock: clock, backoff: backoff)
        let engine = self.engine
        running = Task { await engine.run() }
    }

    /// Stops everything as a killed process would, and closes the file.
    func kill() async {
        running.cancel()
        await running.value
        store.close()
    }

    /// Advances `clock` until the outbox is empty (each step through the engine's backoff), within `limit` seconds.
    func syncUntilEmpty(_ clock: ManualClock, limit: Int = 600) async throws {
        for _ in 0..<limit {
            try await eventually("the engine to finish or wait") {
                try outbox.pending().isEmpty || clock.sleeperCount > 0
            }
            if try outbox.pending().isEmpty { return }
            await clock.advance(by: .seconds(1))
        }
        throw BackendFailure("outbox still holds \(try outbox.pending().count) changes")
    }
}

struct BackendFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension TestBackend {
    static let pickupJSON = #"{"lat":60.1699,"lng":24.9384}"#
    static let dropoffJSON = #"{"lat":60.1715,"lng":24.9475}"#

    /// A ride requested by `customer` and assigned to `provider`, as the provider sees it.
    func assignedRide(customer: String = "c1", provider: String = "p1") async throws -> TripSnapshot {
        let body = try await rideBody(customer, pickup: Self.pickupJSON, dropoff: Self.dropoffJSON)
        let created = await call(
            "POST", "/v1/trips", token: token(customer, .customer), json: body,
            headers: ["Idempotency-Key": UUID().uuidString])
        guard created.status == 201,
            let id = (try? JSONSerialization.jsonObject(with: Data(created.body)) as? [String: Any])?["id"] as? String
        else {
            throw BackendFailure("request ride: \(created.status) \(String(decoding: created.body, as: UTF8.self))")
        }
        let accepted = await assign(id, to: provider)
        guard accepted.status == 200 else {
            throw BackendFailure("accept: \(accepted.status) \(String(decoding: accepted.body, as: UTF8.self))")
        }
        return try WireCoding.decoder().decode(TripSnapshot.self, from: Data(accepted.body))
    }

    /// An order placed by `customer` with merchant m1; returns its id.
    func placedOrder(customer: String = "c1") async throws -> String {
        let body = try await orderBody(
            customer, items: #"[{"sku":"coffee","quantity":2}]"#, destination: Self.dropoffJSON)
        let created = await call(
            "POST", "/v1/orders", token: token(customer, .customer), json: body,
            headers: ["Idempotency-Key": UUID().uuidString])
        guard created.status == 201,
            let id = (try? JSONSerialization.jsonObject(with: Data(created.body)) as? [String: Any])?["orderId"]
                as? String
        else {
            throw BackendFailure("place order: \(created.status) \(String(decoding: created.body, as: UTF8.self))")
        }
        return id
    }

    /// Cancels a ride as its customer.
    func cancelRide(_ id: String, customer: String = "c1") async throws {
        let r = await call(
            "POST", "/v1/trips/\(id)/cancel", token: token(customer, .customer), json: #"{"reason":"changed my mind"}"#)
        guard r.status == 200 else {
            throw BackendFailure("cancel: \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        }
    }
}
