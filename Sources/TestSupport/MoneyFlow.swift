public import Foundation
public import EnRouteModels

/// The money tests' steps through the API: a ride requested with a card, and driven to its end and settled.
public enum MoneyFlow {
    /// Requests a ride as `customer` with `card`; returns the answer and the body it sent.
    public static func request(
        _ backend: TestBackend, _ customer: String, card: String? = "pm_card_visa", key: String = UUID().uuidString,
        body: String? = nil
    ) async throws -> (status: Int, body: [UInt8], json: String) {
        let json: String
        if let body {
            json = body
        } else {
            json = try await backend.rideBody(
                customer, pickup: TestBackend.pickup, dropoff: TestBackend.dropoff, card: card)
        }
        let r = await backend.call(
            "POST", APIPath.trips, token: backend.token(customer, .customer), json: json,
            headers: ["Idempotency-Key": key])
        return (r.status, r.body, json)
    }

    /// Drives trip `id` with provider `p1`: assigned, arrived, (waits `wait` seconds), on trip, completed; then
    /// settles. Throws at the first step the API refuses.
    public static func drive(_ backend: TestBackend, _ id: String, wait: TimeInterval = 60) async throws {
        try expectOK(await backend.assign(id, to: "p1").status, "assign")
        await backend.clock.advance(by: .seconds(120))
        try expectOK(await backend.step(id, "driverArrived").status, "driverArrived")
        await backend.clock.advance(by: .seconds(Int(wait)))
        try expectOK(await backend.step(id, "onTrip").status, "onTrip")
        await backend.clock.advance(by: .seconds(600))
        try expectOK(await backend.step(id, "completed").status, "completed")
        try await backend.settlePayments()
    }

    /// The trip in an answer's body.
    public static func trip(_ body: [UInt8]) throws -> Trip {
        try WireCoding.decoder().decode(Trip.self, from: Data(body))
    }

    private static func expectOK(_ status: Int, _ step: String) throws {
        guard status == 200 else { throw Failure("\(step): \(status), expected 200") }
    }
}
