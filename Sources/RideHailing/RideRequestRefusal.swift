public import EnRouteModels
public import HTTPTransport
import Foundation

/// A refusal of `POST /v1/trips` the rider must act on: the quote or the payment, never worth retrying as is.
public enum RideRequestRefusal: Error, Sendable, Equatable {
    /// 409 `quote-expired`: the quote ran out; `fresh` is the same product re-quoted, to show and confirm.
    case quoteExpired(fresh: Estimate)
    /// 422 naming `/quoteId`: the server does not know the quote (or it is another account's).
    case quoteRejected(detail: String)
    /// 402: the price could not be held on the card (declined, bank challenge, outstanding balance, no card).
    case payment(PaymentProblem)

    /// The refusal a non-2xx answer stands for, or nil when it is some other failure.
    public init?(_ response: HTTPClientResponse) {
        let decoder = WireCoding.decoder()
        switch response.status {
        case 402:
            guard let problem = Self.paymentProblem(response.body) else { return nil }
            self = .payment(problem)
        case 409:
            guard let expired = try? decoder.decode(QuoteExpiredProblem<Estimate>.self, from: response.body),
                expired.type == PaymentProblemType.quoteExpired
            else { return nil }
            self = .quoteExpired(fresh: expired.quote)
        case 422:
            guard let problem = try? decoder.decode(Problem.self, from: response.body),
                let field = problem.errors?.first(where: { $0.pointer == "/quoteId" })
            else { return nil }
            self = .quoteRejected(detail: field.detail)
        default:
            return nil
        }
    }

    /// A 402 body as a `PaymentProblem`; a plain problem document without `detail` still reads, its title standing in.
    static func paymentProblem(_ body: Data) -> PaymentProblem? {
        let decoder = WireCoding.decoder()
        if let problem = try? decoder.decode(PaymentProblem.self, from: body) { return problem }
        guard let plain = try? decoder.decode(Problem.self, from: body) else { return nil }
        return PaymentProblem(
            type: plain.type, title: plain.title, status: plain.status, detail: plain.detail ?? plain.title)
    }
}
