public import Foundation
public import EnRouteModels

/// Rides booked ahead the way the rider's app books them: an estimate for the time, then a request naming it.
extension TestBackend {
    /// `POST /v1/estimates` for a ride from the standard pickup at `scheduledFor` (nil: now).
    public func estimates(_ customer: String, at scheduledFor: Date?) async -> (status: Int, body: [UInt8]) {
        let r = await call(
            "POST", "/v1/estimates", token: token(customer, .customer),
            json: #"{"pickup":\#(Self.pickup),"dropoff":\#(Self.dropoff)\#(Self.when(scheduledFor))}"#)
        return (r.status, r.body)
    }

    /// `POST /v1/trips` for a ride at `scheduledFor` on the economy quote asked for `quotedFor` (the same time by
    /// default), paid with `card` (saved first).
    public func book(
        _ customer: String = "c1", at scheduledFor: Date?, quotedFor: Date?? = nil, card: String = "pm_card_visa"
    ) async throws -> (status: Int, body: [UInt8]) {
        await addCard(customer, card)
        let quoted = await estimates(customer, at: quotedFor ?? scheduledFor)
        guard quoted.status == 200 else { throw Failure("estimates: \(quoted.status)") }
        let estimates = try WireCoding.decoder().decode([Estimate].self, from: Data(quoted.body))
        let quote = estimates.first { $0.productID == "economy" }?.quoteId ?? ""
        let r = await call(
            "POST", "/v1/trips", token: token(customer, .customer),
            json: #"{"pickup":\#(Self.pickup),"dropoff":\#(Self.dropoff),"productID":"economy","#
                + #""quoteId":"\#(quote)"\#(Self.when(scheduledFor))}"#,
            headers: ["Idempotency-Key": UUID().uuidString])
        return (r.status, r.body)
    }

    /// A ride booked for `seconds` from now, as created.
    public func bookRide(_ customer: String = "c1", in seconds: TimeInterval) async throws -> Trip {
        let r = try await book(customer, at: clock.date.addingTimeInterval(seconds))
        guard r.status == 201 else { throw Failure("book: \(r.status) \(String(decoding: r.body, as: UTF8.self))") }
        return try WireCoding.decoder().decode(Trip.self, from: Data(r.body))
    }

    private static func when(_ scheduledFor: Date?) -> String {
        scheduledFor.map { #","scheduledFor":"\#(ISO8601.format($0))""# } ?? ""
    }
}
