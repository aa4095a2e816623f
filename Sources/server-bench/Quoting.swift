import Foundation

/// The money steps a customer's app takes before a request, over a bench connection: a saved card, then a quote
/// whose id the request names (the server refuses a ride or an order without one).
extension FanoutBench.Connection {
    /// The sandbox gateway's test Visa, saved as the default card of the account `token` signs for.
    func addCard(token: String) throws {
        let saved = try request(
            "POST", "/v1/payment-methods", token: token, body: #"{"token":"pm_card_visa","makeDefault":true}"#)
        guard saved.status == 201 || saved.status == 200 else {
            throw FanoutBench.Failure(description: "save card: \(saved.status) \(saved.body.prefix(200))")
        }
    }

    /// A ride request body from `pickup` to `dropoff` (JSON coordinates) naming a fresh quote of `product`.
    func quotedRide(token: String, pickup: String, dropoff: String, product: String = "economy") throws -> String {
        let quoted = try request(
            "POST", "/v1/estimates", token: token, body: #"{"pickup":\#(pickup),"dropoff":\#(dropoff)}"#)
        let estimates = (try? JSONSerialization.jsonObject(with: Data(quoted.body.utf8))) as? [[String: Any]]
        guard quoted.status == 200,
            let quote = estimates?.first(where: { $0["productID"] as? String == product })?["quoteId"] as? String
        else {
            throw FanoutBench.Failure(description: "estimates: \(quoted.status) \(quoted.body.prefix(200))")
        }
        return #"{"pickup":\#(pickup),"dropoff":\#(dropoff),"productID":"\#(product)","quoteId":"\#(quote)"}"#
    }

    /// An order body for `basket` (the members merchantId, items and destination, without braces) naming a fresh quote.
    func quotedOrder(token: String, basket: String) throws -> String {
        let quoted = try request("POST", "/v1/orders/quote", token: token, body: "{\(basket)}")
        guard quoted.status == 200, let quote = FanoutBench.field("quoteId", in: quoted.body) else {
            throw FanoutBench.Failure(description: "order quote: \(quoted.status) \(quoted.body.prefix(200))")
        }
        return #"{\#(basket),"quoteId":"\#(quote)"}"#
    }
}
