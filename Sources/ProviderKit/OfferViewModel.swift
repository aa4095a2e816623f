public import ClientKit
import HTTPTransport
public import EnRouteModels
public import Observation
import Foundation

/// The offer card: a countdown to `expiresAt` and accept or decline. Accepting is a race against the time limit, so it
/// needs the network now; it is never queued.
@MainActor @Observable
public final class OfferViewModel {
    /// What the card shows.
    public private(set) var state: OfferViewState

    @ObservationIgnored private let api: any OfferResponding
    @ObservationIgnored private let clock: any Clock<Duration>
    @ObservationIgnored private let dates: any DateProvider

    static let offlineMessage = "You're offline — the offer can't be accepted."
    static let expiredMessage = "The offer has expired."
    static let goneMessage = "This offer is no longer available."
    static let failedMessage = "The offer couldn't be accepted. Try again."

    /// A card for `offer`; `clock` ticks the countdown, `dates` tells the time it counts against.
    public init(offer: Offer, api: any OfferResponding, clock: any Clock<Duration>, dates: any DateProvider) {
        self.api = api
        self.clock = clock
        self.dates = dates
        state = OfferViewState(offer: offer, secondsLeft: Self.secondsLeft(until: offer.expiresAt, now: dates.now()))
    }

    /// Counts down once per displayed second; marks the offer expired at zero. Returns when answered, expired or
    /// cancelled.
    public func runCountdown() async {
        while !Task.isCancelled {
            let remaining = state.offer.expiresAt.timeIntervalSince(dates.now())
            state.secondsLeft = Self.secondsLeft(until: state.offer.expiresAt, now: dates.now())
            if state.secondsLeft == 0 {
                if state.phase == .open || state.phase == .accepting {
                    state.phase = .expired
                    state.message = Self.expiredMessage
                }
                return
            }
            guard state.phase == .open || state.phase == .accepting else { return }
            // Sleep until the displayed number changes.
            let untilTick = remaining - Double(state.secondsLeft - 1)
            do { try await clock.sleep(for: .milliseconds(max(1, Int((untilTick * 1000).rounded(.up))))) } catch {
                return
            }
        }
    }

    /// Accepts the offer now: once, with a short timeout. Offline, it says so and leaves the offer open.
    public func accept() async {
        state.secondsLeft = Self.secondsLeft(until: state.offer.expiresAt, now: dates.now())
        guard state.phase == .open else { return }
        guard state.secondsLeft > 0 else {
            state.phase = .expired
            state.message = Self.expiredMessage
            return
        }
        state.phase = .accepting
        state.message = nil
        do {
            switch try await api.accept(offerId: state.offer.offerId) {
            case .accepted(let trip):
                state.phase = .accepted(trip)
            case .gone(_, let reason):
                state.phase = .gone
                state.message = "\(Self.goneMessage) \(reason)"
            }
        } catch is HTTPClientError {
            state.phase = .open
            state.message = Self.offlineMessage
        } catch APIError.problem(let problem) where problem.status == 404 || problem.status == 410 {
            state.phase = .gone
            state.message = Self.goneMessage
        } catch {
            state.phase = .open
            state.message = Self.failedMessage
        }
        if state.phase == .open, Self.secondsLeft(until: state.offer.expiresAt, now: dates.now()) == 0 {
            state.phase = .expired
            state.message = Self.expiredMessage
        }
    }

    /// Declines; the card closes even if the server cannot be told (the offer then simply times out there).
    public func decline() async {
        guard state.phase == .open else { return }
        state.phase = .declined
        try? await api.decline(offerId: state.offer.offerId)
    }

    /// The server withdrew the offer (`offerWithdrawn`).
    public func withdraw() {
        guard state.phase == .open || state.phase == .accepting else { return }
        state.phase = .gone
        state.message = Self.goneMessage
    }

    static func secondsLeft(until expiry: Date, now: Date) -> Int {
        max(0, Int(expiry.timeIntervalSince(now).rounded(.up)))
    }
}
