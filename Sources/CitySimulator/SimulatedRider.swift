import Foundation
import HTTPTransport
import EnRouteModels
import RideHailing

/// One rider on RideHailing: saves a sandbox card (mostly `pm_card_visa`, some declines and a challenge card), quotes
/// and confirms a ride through the trip view model, watches it live, sometimes cancels, and tips and rates after.
@MainActor
final class SimulatedRider {
    let account: String
    private let context: SimulationContext
    private let network: FaultyHTTPClient
    private let server: APIServer
    private let api: RemoteTripAPI
    private var random: SeededGenerator

    init(account: String, context: SimulationContext) throws {
        self.account = account
        self.context = context
        network = context.network(for: account)
        server = try context.server(account, .customer)
        api = RemoteTripAPI(client: network, server: server)
        random = SeededGenerator(seed: context.seed, stream: "rider:" + account)
    }

    /// The card a rider of this draw pays with.
    nonisolated static func card(_ draw: Double) -> String {
        switch draw {
        case ..<0.88: "pm_card_visa"
        case ..<0.92: "pm_card_visa_chargeDeclined"
        case ..<0.94: "pm_card_visa_chargeDeclinedInsufficientFunds"
        default: "pm_card_authenticationRequired"
        }
    }

    /// One ride from `pickup` to `dropoff`, to its end (or the run's): asked for now, or booked for `bookedAhead`
    /// seconds from the request.
    func ride(from pickup: Coordinate, to dropoff: Coordinate, bookedAhead: TimeInterval? = nil) async {
        let log = context.log
        let card = Self.card(random.unit())
        guard await retrying({ try await self.api.addPaymentMethod(token: card, makeDefault: true) }) != nil else {
            log.record { $0.ridesRefusedPayment += 1 }
            return
        }
        let keys = IDCounter(prefix: account, salt: random.next())
        // Whole seconds: the time goes over the wire and comes back on the trip.
        let due = bookedAhead.map {
            Date(timeIntervalSince1970: (context.dates.now().timeIntervalSince1970 + $0).rounded())
        }
        let trips: any TripAPI =
            due.map { BookedRideAPI(base: api, client: network, server: server, scheduledFor: $0) } ?? api
        let viewModel = TripViewModel(
            api: trips, channel: SSELiveTripChannel(client: network, server: server), clock: context.clock,
            logger: QuietRideLogger(), makeKey: { Self.uuid(keys.next()) }, payments: api, dates: context.dates)
        for _ in 0..<5 where viewModel.state.estimates.isEmpty {
            await viewModel.loadEstimates(pickup: pickup, dropoff: dropoff)
            if viewModel.state.estimates.isEmpty, await !context.pause(5) { return }
        }
        guard let shown = viewModel.state.estimates.first else { return }
        let product = shown.productID
        let seen = SimulationObservations.EstimateShown(
            second: context.second, quoteId: shown.quoteId, fare: shown.fare, booked: due != nil)
        log.record { $0.estimatesShown.append(seen) }
        let requested = context.dates.now()
        await viewModel.confirm(productID: product)
        guard await answerPrompts(viewModel, product: product), let trip = viewModel.state.trip else { return }
        log.record {
            $0.ridesRequested += 1; $0.tripIDs.append(trip.id)
            if let due { $0.bookedRides[trip.id] = .init(scheduledFor: trip.scheduledFor ?? due) }
        }
        await watch(viewModel, requestedAt: requested, booked: due != nil)
    }

    /// Answers what the app asks after a confirm until the ride exists (at most six times): a new price, a bank
    /// challenge, a lost answer. False when the rider gives up (the card is refused) or the run ends.
    private func answerPrompts(_ viewModel: TripViewModel, product: String) async -> Bool {
        let log = context.log
        var attempts = 0, answered = false
        while viewModel.state.trip == nil, attempts < 6, !Task.isCancelled {
            attempts += 1
            switch viewModel.state.prompt {
            case .confirmNewPrice?:
                await viewModel.confirm(productID: product)
            case .challenge(let url)?:
                guard !answered, await answerChallenge(url) else {
                    log.record { $0.ridesRefusedPayment += 1 }; return false
                }
                answered = true
                log.record { $0.challengesAnswered += 1 }
                await viewModel.challengeAnswered()
            case .cardDeclined?, .addCard?, .outstandingBalance?:
                log.record { $0.ridesRefusedPayment += 1 }
                return false
            case nil:
                // Lost on the way: the same tap again after a pause (a fresh key; the server keeps one active ride).
                guard await context.pause(3) else { return false }
                if let active = try? await api.activeTrip() {
                    _ = active; await viewModel.restoreActiveTrip()
                } else {
                    await viewModel.confirm(productID: product)
                }
            }
        }
        return true
    }

    /// Watches the ride live to its end, sampling each simulated second: the wait for a driver, the promised
    /// arrival, now and then a cancel; tips and rates a completed ride. A `booked` ride waits for its search to begin
    /// as long as it takes: its rider neither times the match nor cancels out of impatience.
    private func watch(_ viewModel: TripViewModel, requestedAt requested: Date, booked: Bool) async {
        let log = context.log
        let impatient: Double? = random.unit() < 0.05 ? 20 + 100 * random.unit() : nil
        let cancelAfter = booked ? nil : impatient
        var matched = false, promised: Date?
        let watcher = Task { @MainActor in await viewModel.waitForLiveToEnd() }
        defer { watcher.cancel(); viewModel.stopLive() }
        while !Task.isCancelled {
            guard await context.pause(1) else { return }
            let now = context.dates.now()
            guard let current = viewModel.state.trip else { continue }
            if !matched,
                current.driver != nil || [.driverAssigned, .driverArrived, .onTrip, .completed].contains(current.state)
            {
                matched = true
                let seconds = now.timeIntervalSince(requested)
                if !booked { log.record { $0.matchSeconds.append(seconds) } }
            }
            if booked, !current.state.isActive || current.matchingStartedAt != nil {
                let tripID = current.id, started = current.matchingStartedAt
                let ended: TripState? = current.state.isActive ? nil : current.state
                log.record {
                    $0.bookedRides[tripID]?.matchingStartedAt = started; $0.bookedRides[tripID]?.ended = ended
                }
            }
            if promised == nil, current.state == .onTrip, let eta = viewModel.state.etaSeconds {
                promised = now.addingTimeInterval(TimeInterval(eta))
            }
            if let cancelAfter, current.state.isActive, current.state != .onTrip,
                now.timeIntervalSince(requested) > cancelAfter,
                viewModel.state.canCancel
            {
                await viewModel.cancelTrip()
            }
            switch current.state {
            case .completed:
                let tripID = current.id,
                    arrival = SimulationObservations.RideArrival(promised: promised, arrivedAt: now)
                log.record {
                    $0.ridesCompleted += 1; $0.rideArrivals.append(arrival); $0.paidTripIDs.append(tripID)
                }
                await tipAndRate(tripID)
                return
            case .noDriversFound:
                log.record { $0.ridesNoProvider += 1 }
                return
            case .cancelled:
                log.record { $0.ridesCancelled += 1 }
                return
            default:
                continue
            }
        }
    }

    private func tipAndRate(_ tripID: String) async {
        if random.unit() < 0.7 {
            let stars = random.unit() < 0.8 ? 5 : 4
            if await retrying({ try await self.api.rate(tripID: tripID, stars: stars, comment: nil) }) != nil {
                context.log.record { $0.ratings += 1 }
            }
        }
        if random.unit() < 0.3 {
            let key = Self.uuid("tip-" + tripID)
            if await retrying({
                try await self.api.tip(
                    tripID: tripID, amountMinor: 100 * (1 + Int(self.random.unit() * 3)), idempotencyKey: key)
            }) != nil {
                context.log.record { $0.tips += 1 }
            }
        }
    }

    /// POSTs the sandbox challenge as the rider would answer it, to the server the rider talks to.
    private func answerChallenge(_ url: URL) async -> Bool {
        // The sandbox's challenges live on the server itself (its own base URL may not be the one we reach it by).
        guard url.path.hasPrefix("/v1/payments/sandbox/challenges/") else { return false }
        return await retrying({ () async throws -> Bool in
            let response = try await self.network.send(await self.server.request("POST", url.path))
            try response.requireSuccess()
            return true
        }) != nil
    }

    /// `body` tried up to five times, a few simulated seconds apart, through the faults; nil when it kept failing.
    private func retrying<T>(_ body: @escaping () async throws -> T) async -> T? {
        for attempt in 1...5 {
            if let value = try? await body() { return value }
            guard await context.pause(Double(2 * attempt)) else { return nil }
        }
        return nil
    }

    /// A UUID derived from `text`, so idempotency keys replay with the seed.
    nonisolated static func uuid(_ text: String) -> UUID {
        var generator = SeededGenerator(seed: 0, stream: text)
        let a = generator.next(), b = generator.next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: a >> (8 * UInt64(i)));
            bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (8 * UInt64(i)))
        }
        bytes[6] = (bytes[6] & 0x0f) | 0x40; bytes[8] = (bytes[8] & 0x3f) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

/// The rider kit's log, silenced (a city of riders would drown the progress line).
struct QuietRideLogger: RideLogger {
    func warning(_ message: String) {}
}
