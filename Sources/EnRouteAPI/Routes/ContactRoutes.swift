public import EnRouteDomain
import Foundation
import HTTPEngine
import EnRouteModels

/// What the calls-and-proof routes run on: relayed calls, the parties' own numbers and proof uploads.
public struct ContactServices: Sendable {
    public let calls: TripCalls
    public let phones: any PhoneBook
    public let proofs: ProofUploads
    public init(calls: TripCalls, phones: any PhoneBook, proofs: ProofUploads) {
        self.calls = calls; self.phones = phones; self.proofs = proofs
    }
}

extension EnRouteAPI {
    /// The platform's relayed number: a party's own number (kept, never shown to the other party) and `POST
    /// /v1/trips/{id}/call`, the number that reaches the other party of this trip only.
    func addContactRoutes(_ r: inout Router) {
        guard let contact else { return }
        r.put(
            APIPath.Template.accountPhone,
            limited(.steps) { req in
                let account = try auth.account(for: req, roles: [.customer, .provider])
                let body = try req.decode(PhoneNumberBody.self)
                guard let number = E164PhoneNumber(body.phoneNumber) else {
                    throw HTTPError.invalid("/phoneNumber", E164PhoneNumber.rule)
                }
                do { try await contact.phones.setPhoneNumber(number, for: account) } catch {
                    throw HTTPError.unavailable(
                        retryAfterSeconds: 1, detail: "The number could not be stored; try again.")
                }
                return try .json(PhoneNumberBody(phoneNumber: number.e164))
            })
        r.get(APIPath.Template.accountPhone) { req in
            let account = try auth.account(for: req, roles: [.customer, .provider])
            guard let number = contact.phones.phoneNumber(of: account) else {
                throw HTTPError.notFound("You have not given a phone number.")
            }
            return try .json(PhoneNumberBody(phoneNumber: number.e164))
        }
        r.post(
            APIPath.Template.tripCall,
            limited(.steps) { req in
                let account = try auth.account(for: req)
                do {
                    return try .json(try await contact.calls.call(try req.parameter("id"), by: account))
                } catch let refusal as CallRefusal {
                    throw Self.problem(refusal, policy: contact.calls.policy)
                }
            })
    }

    /// The problem for a refused call.
    static func problem(_ refusal: CallRefusal, policy: CallPolicy) -> HTTPError {
        let type = "https://enroute.invalid/problems/call-unavailable"
        switch refusal {
        case .notAParty:
            return .notFound("No such trip.")
        case .noProvider:
            return HTTPError(
                status: 409, title: "No provider yet", detail: "Calls open once a provider has accepted the trip.",
                type: type)
        case .closed:
            return HTTPError(
                status: 409, title: "Calls closed",
                detail:
                    "The trip ended more than \(Int(policy.closeAfterEnd / 60)) minutes ago; its relayed number no "
                    + "longer connects.",
                type: type)
        case .callerHasNoNumber:
            return HTTPError(
                status: 409, title: "No phone number",
                detail:
                    "Give your phone number first (PUT \(APIPath.Template.accountPhone)); the other party "
                    + "never sees it.",
                type: type)
        case .otherHasNoNumber(let party):
            return HTTPError(
                status: 409, title: "No phone number",
                detail: "The \(party.rawValue) has no phone number on file; write to them instead.", type: type)
        case .relayUnavailable:
            return .unavailable(retryAfterSeconds: 5, detail: "The call relay could not be reached; try again shortly.")
        }
    }
}
