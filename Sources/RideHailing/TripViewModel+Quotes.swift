import EnRouteModels
import Foundation

/// Quotes: the price on screen has an identity and a time limit; it counts down, re-quotes itself when it runs out, and
/// a confirmation names it. A new price is shown, never confirmed silently.
extension TripViewModel {
    /// How long to wait before re-quoting again after a re-quote failed (offline) or brought a quote already run out.
    static let requoteRetry: Duration = .seconds(5)

    /// Confirms the ride at the quote on screen for `productID`: sends its `quoteId`, never an amount.
    public func confirm(productID: String) async {
        guard let route, let estimate = state.estimates.first(where: { $0.productID == productID }) else { return }
        state.prompt = nil
        await requestRide(
            TripRequest(pickup: route.pickup, dropoff: route.dropoff, productID: productID, quoteId: estimate.quoteId))
    }

    /// (Re)starts the countdown of the quotes on screen; without a date source or an expiry there is none.
    func watchQuotes() {
        quoteTask?.cancel()
        quoteTask = nil
        guard dates != nil, route != nil, state.estimates.contains(where: { $0.expiresAt != nil }) else {
            state.quoteSecondsLeft = nil
            return
        }
        quoteTask = Task { [weak self] in await self?.runQuoteClock() }
    }

    /// Stops the countdown; the quotes stay on screen as they are.
    func stopQuotes() {
        quoteTask?.cancel()
        quoteTask = nil
    }

    /// A trip was created: its quote is spent, the request screen's quote state goes.
    func requested() {
        stopQuotes()
        state.quoteSecondsLeft = nil
        state.refreshedQuotes = []
        state.quotesExpired = false
        state.prompt = nil
        refusedRequest = nil
    }

    /// Ticks on whole seconds of time left; at zero re-quotes the route, and after a failed re-quote marks the quotes
    /// expired and tries again `requoteRetry` later.
    private func runQuoteClock() async {
        while !Task.isCancelled, let dates, let route, let expiry = state.estimates.compactMap(\.expiresAt).min() {
            let left = expiry.timeIntervalSince(dates.now())
            if left > 0 {
                state.quoteSecondsLeft = Int(left.rounded(.up))
                let toNextSecond = left - left.rounded(.down)
                let wait: Duration =
                    toNextSecond > 0 ? .milliseconds(Int((toNextSecond * 1000).rounded(.up))) : .seconds(1)
                do { try await clock.sleep(for: wait) } catch { return }
                continue
            }
            state.quoteSecondsLeft = 0
            if await requote(pickup: route.pickup, dropoff: route.dropoff),
                let next = state.estimates.compactMap(\.expiresAt).min(), next > dates.now()
            {
                continue
            }
            if !Task.isCancelled { state.quotesExpired = true }
            do { try await clock.sleep(for: Self.requoteRetry) } catch { return }
        }
    }

    /// Fetches fresh quotes for the route and records, per product, the price seen before and the new one; false when
    /// the fresh quotes could not be had.
    @discardableResult
    func requote(pickup: Coordinate, dropoff: Coordinate) async -> Bool {
        guard let fresh = try? await feed.api.estimate(pickup: pickup, dropoff: dropoff), !Task.isCancelled,
            state.trip?.state.isActive != true
        else { return false }
        for estimate in fresh {
            guard let old = state.estimates.first(where: { $0.productID == estimate.productID }),
                old.quoteId != estimate.quoteId || old.fare != estimate.fare
            else { continue }
            record(QuoteRefresh(productID: estimate.productID, before: old.fare, after: estimate.fare))
        }
        state.estimates = fresh
        state.quotesExpired = false
        return true
    }

    /// A 409 `quote-expired`: the fresh quote replaces the one on screen, and the rider is asked to confirm it.
    func showFresh(_ fresh: Estimate) {
        let before = state.estimates.first { $0.productID == fresh.productID }?.fare ?? fresh.fare
        if let index = state.estimates.firstIndex(where: { $0.productID == fresh.productID }) {
            state.estimates[index] = fresh
        } else {
            state.estimates.append(fresh)
        }
        let refresh = QuoteRefresh(productID: fresh.productID, before: before, after: fresh.fare)
        record(refresh)
        state.prompt = .confirmNewPrice(refresh)
        watchQuotes()
    }

    private func record(_ refresh: QuoteRefresh) {
        state.refreshedQuotes.removeAll { $0.productID == refresh.productID }
        state.refreshedQuotes.append(refresh)
    }
}
