import Foundation
import EnRouteModels

/// The refusals of a confirmation and how the rider answers them: a new price to confirm, a declined card (pick
/// another), a bank challenge (answer it, then the same quote is requested again under a new key), a debt (settle it),
/// no card (add one).
extension TripViewModel {
    static let switchCardFailedMessage = "Couldn't switch cards. Try again."
    static let settleFailedMessage = "Couldn't pay the balance. Try again."
    static let addCardFailedMessage = "Couldn't add the card. Try again."
    static let quoteGoneMessage = "That price is no longer available. Check the new price and confirm again."

    /// The server refused `request`: show what the rider must do; nothing is retried by itself.
    func refused(_ refusal: RideRequestRefusal, _ request: TripRequest) async {
        refusedRequest = request
        if route == nil { route = (request.pickup, request.dropoff) }
        switch refusal {
        case .quoteExpired(let fresh):
            showFresh(fresh)
        case .quoteRejected:
            let before = state.estimates.first { $0.productID == request.productID }
            if await requote(pickup: request.pickup, dropoff: request.dropoff),
                let after = state.estimates.first(where: { $0.productID == request.productID })
            {
                state.prompt = .confirmNewPrice(
                    QuoteRefresh(productID: after.productID, before: before?.fare ?? after.fare, after: after.fare))
                watchQuotes()
            } else {
                state.errorMessage = Self.quoteGoneMessage
            }
        case .payment(let problem):
            let prompt = RideRequestPrompt(problem)
            state.prompt = prompt
            if case .cardDeclined = prompt { await loadPaymentMethods() }
        }
    }

    /// The rider answered the bank's challenge: repeats the refused request with the same quote and a new key, so
    /// the server uses the hold the challenge confirmed.
    public func challengeAnswered() async {
        guard case .challenge = state.prompt, let request = refusedRequest else { return }
        state.prompt = nil
        await requestRide(request)
    }

    /// After a decline, the rider picked another saved card: it becomes the default and the refused request is
    /// repeated with the same quote and a new key.
    public func payWith(cardID: String) async {
        guard case .cardDeclined = state.prompt, let payments, let request = refusedRequest else { return }
        state.isPaying = true
        do {
            try await payments.makeDefaultPaymentMethod(id: cardID)
        } catch {
            state.isPaying = false
            state.errorMessage = Self.switchCardFailedMessage
            return
        }
        if let methods = try? await payments.paymentMethods() { state.paymentMethods = methods }
        state.isPaying = false
        state.prompt = nil
        state.errorMessage = nil
        await requestRide(request)
    }

    /// Pays the outstanding balance with the default card (one key per tap); the rider then confirms the ride again.
    public func settle() async {
        guard case .outstandingBalance = state.prompt, let payments else { return }
        state.isPaying = true
        defer { state.isPaying = false }
        do {
            let balance = try await payments.settleBalance(idempotencyKey: makeKey())
            state.prompt = balance.outstanding.amountMinor > 0 ? .outstandingBalance(balance.outstanding) : nil
            state.errorMessage = nil
        } catch RideRequestRefusal.payment(let problem) {
            state.errorMessage = RideRequestPrompt(problem).message
        } catch {
            state.errorMessage = Self.settleFailedMessage
        }
    }

    /// Saves a card the app added on the payment provider's page (its `pm_…` token) as the default; clears a
    /// "no card" or "declined" prompt so the rider can confirm again.
    public func addCard(token: String) async {
        guard let payments else { return }
        state.isPaying = true
        defer { state.isPaying = false }
        do {
            _ = try await payments.addPaymentMethod(token: token, makeDefault: true)
            if let methods = try? await payments.paymentMethods() { state.paymentMethods = methods }
            switch state.prompt {
            case .addCard, .cardDeclined: state.prompt = nil
            default: break
            }
            state.errorMessage = nil
        } catch {
            state.errorMessage = Self.addCardFailedMessage
        }
    }

    /// Loads the saved cards into `state.paymentMethods`; they stay as they were when this fails.
    public func loadPaymentMethods() async {
        guard let payments, let methods = try? await payments.paymentMethods() else { return }
        state.paymentMethods = methods
    }
}
