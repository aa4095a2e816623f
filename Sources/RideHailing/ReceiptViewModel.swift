public import Foundation
public import Observation
import HTTPTransport
import EnRouteModels

/// The after-trip screen: the receipt once the payment settles, a tip (once) and a rating (once).
@MainActor @Observable
public final class ReceiptViewModel {
    /// What the screen shows.
    public private(set) var state = ReceiptViewState()
    /// The completed trip.
    public let tripID: String

    @ObservationIgnored private let api: any TripReceiptAPI
    @ObservationIgnored private let clock: any Clock<Duration>
    @ObservationIgnored private let makeKey: @Sendable () -> UUID
    /// The key of the tip last tried, reused while the amount is the same so a lost answer never tips twice.
    @ObservationIgnored private var tipKey: (amountMinor: Int, key: UUID)?

    /// How many times `load()` asks before giving up for now (about five minutes with the delays below).
    static let loadAttempts = 12
    /// The pauses between asks: 2, 4, 8, 16 s, then every 30 s.
    static func retryDelay(after attempt: Int) -> Duration { .seconds(min(30, 1 << min(attempt, 5))) }

    static let notReadyMessage = "Your receipt isn't ready yet. It will appear once the payment goes through."
    static let unavailableMessage = "This receipt isn't available."
    static let tipFailedMessage = "Couldn't send the tip. Try again."
    static let tippedBeforeMessage = "You already tipped for this trip."
    static let tipClosedMessage = "Tips for this trip have closed."
    static let rateFailedMessage = "Couldn't send the rating. Try again."
    static let ratedBeforeMessage = "You already rated this trip."

    /// A screen for `tripID` over `api`; `clock` times the retries; `makeKey` makes the tip's idempotency key.
    public init(
        tripID: String, api: any TripReceiptAPI, clock: any Clock<Duration>,
        makeKey: @escaping @Sendable () -> UUID = { UUID() }
    ) {
        self.tripID = tripID
        self.api = api
        self.clock = clock
        self.makeKey = makeKey
    }

    /// Loads the receipt, asking again while the payment has not settled (404) or the network fails, politely:
    /// `retryDelay` apart (or as `Retry-After` says), at most `loadAttempts` times.
    public func load() async {
        guard !state.isLoading else { return }
        state.isLoading = true
        defer { state.isLoading = false }
        for attempt in 1...Self.loadAttempts {
            var wait = Self.retryDelay(after: attempt)
            do {
                state.receipt = try await api.receipt(tripID: tripID)
                state.isWaitingForPayment = false
                state.errorMessage = nil
                return
            } catch let error as APIError where error.status == 404 {
                state.isWaitingForPayment = true
            } catch APIError.retryAfter(let after, _) {
                wait = max(wait, after)
            } catch let error as APIError where (400..<500).contains(error.status ?? 0) {
                state.isWaitingForPayment = false
                state.errorMessage = Self.unavailableMessage
                return
            } catch {
                // Offline or a server error: the receipt may be there next time.
            }
            guard attempt < Self.loadAttempts, !Task.isCancelled else { break }
            do { try await clock.sleep(for: wait) } catch { break }
        }
        if !Task.isCancelled { state.errorMessage = Self.notReadyMessage }
    }

    /// Tips the provider `amountMinor` (in the trip's currency), once; a retry of the same amount reuses its key.
    public func tip(amountMinor: Int) async {
        guard state.canTip, amountMinor > 0 else { return }
        let key = tipKey?.amountMinor == amountMinor ? tipKey!.key : makeKey()
        tipKey = (amountMinor, key)
        state.tip = .sending
        do {
            try await api.tip(tripID: tripID, amountMinor: amountMinor, idempotencyKey: key)
            state.tip = .sent(amountMinor: amountMinor)
            state.errorMessage = nil
            // now with its tip line
            if let receipt = try? await api.receipt(tripID: tripID) { state.receipt = receipt }
        } catch APIError.problem(let problem) where problem.status == 409 {
            state.tip = .sent(amountMinor: nil)
            state.errorMessage = Self.tippedBeforeMessage
        } catch APIError.problem(let problem) where problem.status == 422 || problem.status == 403 {
            state.tip = .closed
            state.errorMessage = problem.detail ?? Self.tipClosedMessage
        } catch {
            state.tip = .notSent
            state.errorMessage = Self.tipFailedMessage
        }
    }

    /// Rates the trip 1 to 5 stars, once.
    public func rate(stars: Int, comment: String? = nil) async {
        guard state.canRate, (1...5).contains(stars) else { return }
        state.rating = .sending
        do {
            try await api.rate(tripID: tripID, stars: stars, comment: comment)
            state.rating = .sent(stars: stars)
            state.errorMessage = nil
        } catch APIError.problem(let problem) where problem.status == 409 {
            state.rating = .sent(stars: nil)
            state.errorMessage = Self.ratedBeforeMessage
        } catch {
            state.rating = .notSent
            state.errorMessage = Self.rateFailedMessage
        }
    }
}
