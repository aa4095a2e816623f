public import Foundation
public import EnRouteModels

/// Money steps the way a customer's app takes them: a saved card, then a quote, then a request naming it.
extension TestBackend {
    /// Saves `card` (a sandbox test payment method) for `customer`; saving the same token again is a no-op.
    @discardableResult
    public func addCard(_ customer: String, _ card: String = "pm_card_visa", makeDefault: Bool = true) async -> Int {
        await call(
            "POST", APIPath.paymentMethods, token: token(customer, .customer),
            json: #"{"token":"\#(card)","makeDefault":\#(makeDefault)}"#
        ).status
    }

    /// The quotes for a ride from `pickup` to `dropoff` (JSON coordinates) as `customer` sees them.
    public func rideQuotes(_ customer: String, pickup: String, dropoff: String) async throws -> [Estimate] {
        let r = await call(
            "POST", APIPath.estimates, token: token(customer, .customer),
            json: #"{"pickup":\#(pickup),"dropoff":\#(dropoff)}"#)
        guard r.status == 200 else {
            throw MoneyStepFailed("estimates: \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        }
        return try WireCoding.decoder().decode([Estimate].self, from: Data(r.body))
    }

    /// A ride request body naming a fresh quote of `product` for `customer`, whose card (`card`, saved if missing) will
    /// be held.
    public func rideBody(
        _ customer: String, pickup: String, dropoff: String, product: String = "economy", card: String? = "pm_card_visa"
    ) async throws -> String {
        if let card { await addCard(customer, card) }
        let quotes = try await rideQuotes(customer, pickup: pickup, dropoff: dropoff)
        guard let quote = quotes.first(where: { $0.productID == product })?.quoteId else {
            throw MoneyStepFailed("no quote for \(product)")
        }
        return #"{"pickup":\#(pickup),"dropoff":\#(dropoff),"productID":"\#(product)","quoteId":"\#(quote)"}"#
    }

    /// An order body naming a fresh basket quote for `customer`, whose card (`card`, saved if missing) will be held.
    public func orderBody(
        _ customer: String, merchantId: String = "m1", items: String, destination: String,
        card: String? = "pm_card_visa"
    ) async throws -> String {
        if let card { await addCard(customer, card) }
        let r = await call(
            "POST", APIPath.orderQuote, token: token(customer, .customer),
            json: #"{"merchantId":"\#(merchantId)","items":\#(items),"destination":\#(destination)}"#)
        guard r.status == 200 else {
            throw MoneyStepFailed("order quote: \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        }
        let quote = try WireCoding.decoder().decode(OrderQuote.self, from: Data(r.body))
        return
            #"{"merchantId":"\#(merchantId)","items":\#(items),"destination":\#(destination),"#
            + #""quoteId":"\#(quote.quoteId)"}"#
    }

    /// Runs the payment worker until nothing is due (settlements, tips, callbacks).
    public func settlePayments() async throws {
        try await backend.paymentWorker.drain()
    }
}

/// A money step of a test failed before the behaviour under test.
public struct MoneyStepFailed: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
