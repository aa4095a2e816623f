public import Foundation
public import EnRouteModels
public import Observation
public import ClientKit
import HTTPTransport

/// The rider's map screen: estimates as quotes that count down and refresh, request with retries, the payment refusals
/// to answer, live tracking and cancel.
@MainActor @Observable
public final class TripViewModel {
    /// What the screen shows.
    public internal(set) var state = TripViewState()

    @ObservationIgnored let feed: LiveTripFeed
    @ObservationIgnored let clock: any Clock<Duration>
    @ObservationIgnored let makeKey: @Sendable () -> UUID
    @ObservationIgnored let payments: (any RidePaymentsAPI)?
    @ObservationIgnored let dates: (any DateProvider)?
    @ObservationIgnored private var marker: DriverMarkerAnimator
    @ObservationIgnored private(set) var liveTask: Task<Void, Never>?
    /// The route the quotes on screen price, to re-quote it.
    @ObservationIgnored var route: (pickup: Coordinate, dropoff: Coordinate)?
    /// Counts the quotes down and re-quotes them when they run out.
    @ObservationIgnored var quoteTask: Task<Void, Never>?
    /// The last confirmation the server refused, repeated (same quote, new key) once the rider has answered.
    @ObservationIgnored var refusedRequest: TripRequest?

    static let requestAttempts = 3
    static let requestFailedMessage = "Could not request a ride. Try again."
    static let cancelFailedMessage = "Couldn't cancel the ride. Try again."
    static let tooLateToCancelMessage = "This ride can no longer be cancelled."
    static let estimatesFailedMessage = "Could not load prices. Try again."

    /// A view model over the shared live trip `feed` (and its `api`); `clock` times retries, the marker and the
    /// quotes' countdown; `makeKey` makes one idempotency key per tap; `payments` answers the 402s (settle, cards);
    /// `dates` tells the quotes' time left (without it they do not count down or refresh by themselves).
    public init(
        feed: LiveTripFeed, clock: any Clock<Duration>, makeKey: @escaping @Sendable () -> UUID = { UUID() },
        payments: (any RidePaymentsAPI)? = nil, dates: (any DateProvider)? = nil
    ) {
        self.feed = feed
        self.clock = clock
        self.makeKey = makeKey
        self.payments = payments
        self.dates = dates
        self.marker = DriverMarkerAnimator(clock: clock)
        mirror(feed.state)
    }

    /// A view model with a live trip feed of its own over `api` and `channel`; `clock` also times the backoff,
    /// `logger` hears of state jumps.
    public convenience init(
        api: any TripAPI, channel: any LiveTripChannel, clock: any Clock<Duration>,
        logger: any RideLogger = SystemRideLogger(), makeKey: @escaping @Sendable () -> UUID = { UUID() },
        payments: (any RidePaymentsAPI)? = nil, dates: (any DateProvider)? = nil
    ) {
        self.init(
            feed: LiveTripFeed(api: api, channel: channel, clock: clock, logger: logger), clock: clock,
            makeKey: makeKey,
            payments: payments, dates: dates)
    }

    /// The driver's marker as it should be drawn now, interpolated between reported positions.
    public func markerFrame() -> MarkerFrame? { marker.frame() }

    /// Loads prices for a route into `state.estimates` and, with a date source, counts their quotes down and
    /// re-quotes them when they run out.
    public func loadEstimates(pickup: Coordinate, dropoff: Coordinate) async {
        do {
            state.estimates = try await feed.api.estimate(pickup: pickup, dropoff: dropoff)
            state.errorMessage = nil
            state.refreshedQuotes = []
            state.quotesExpired = false
            route = (pickup, dropoff)
            watchQuotes()
        } catch {
            state.errorMessage = Self.estimatesFailedMessage
        }
    }

    /// Loads free cars near `point`; the map simply shows none when this fails.
    public func loadNearbyDrivers(around point: Coordinate) async {
        state.nearbyDrivers = (try? await feed.api.nearbyDrivers(around: point)) ?? []
    }

    /// Requests a ride: one idempotency key for this tap, 3 attempts 1 s then 2 s apart, then live tracking.
    /// A quote or payment refusal is not retried: it becomes `state.prompt` for the rider to answer.
    public func requestRide(_ request: TripRequest) async {
        guard state.canRequest else { return }
        state.isRequesting = true
        state.errorMessage = nil
        defer { state.isRequesting = false }
        let key = makeKey()  // reused on retries: at most one trip per tap
        for attempt in 1...Self.requestAttempts {
            do {
                let trip = try await feed.api.requestTrip(request, idempotencyKey: key)
                requested()
                apply(trip)
                connectLive(tripID: trip.id)
                return
            } catch let refusal as RideRequestRefusal {
                await refused(refusal, request)
                return
            } catch {
                guard attempt < Self.requestAttempts, !Task.isCancelled else { break }
                do { try await clock.sleep(for: .seconds(attempt)) } catch { break }  // 1 s, then 2 s; or cancelled
            }
        }
        if !Task.isCancelled { state.errorMessage = Self.requestFailedMessage }
    }

    /// Picks up a trip that is already running, for example after the app was relaunched.
    public func restoreActiveTrip() async {
        guard let trip = try? await feed.api.activeTrip() else { return }
        apply(trip)
        connectLive(tripID: trip.id)
    }

    /// Cancels the current trip; live tracking stops once the server reports it over.
    public func cancelTrip() async {
        guard state.canCancel, let tripID = state.trip?.id else { return }
        state.isCancelling = true
        state.errorMessage = nil
        defer { state.isCancelling = false }
        do {
            apply(try await feed.api.cancel(tripID: tripID))
            if state.trip?.state.isActive != true { stopLive() }
        } catch APIError.problem(let problem) where problem.status == 409 {
            state.errorMessage = Self.tooLateToCancelMessage
        } catch {
            state.errorMessage = Self.cancelFailedMessage
        }
    }

    /// Stops live tracking and the quotes' countdown; call when the screen goes away.
    public func stopLive() {
        liveTask?.cancel()
        liveTask = nil
        stopQuotes()
    }

    /// Waits until live tracking ends: the trip is over or `stopLive()` was called.
    public func waitForLiveToEnd() async {
        await liveTask?.value
    }

    /// The rider app's live loop, through the shared feed: resync, stream, back off min(30, 2^attempt) s; ends when the
    /// trip is over. `requestRide` and `restoreActiveTrip` run it in `liveTask`.
    func liveLoop(tripID: String) async {
        guard feed.state.trip?.state.isActive == true else { return }
        await feed.follow(tripID: tripID) { [weak self] state in
            guard let self else { return false }
            self.mirror(state)
            return true
        }
    }

    private func connectLive(tripID: String) {
        guard feed.state.trip?.state.isActive == true else { return }
        liveTask?.cancel()
        liveTask = Task { await self.liveLoop(tripID: tripID) }
    }

    /// A REST answer goes through the feed, so every screen following the trip sees it.
    private func apply(_ trip: Trip) {
        feed.apply(trip)
        mirror(feed.state)
    }

    /// Shows the feed's state; a newer fix moves the marker (its ETA came with it, no version change needed).
    private func mirror(_ live: LiveTripState) {
        // a new trip's fixes start over
        if live.trip?.id != state.trip?.id { marker = DriverMarkerAnimator(clock: clock) }
        state.trip = live.trip
        state.liveETA = live.eta
        if let location = live.driverLocation, location != state.driverLocation, marker.handle(location) != .ignored {
            state.driverLocation = location
        }
        if live.driverLocation == nil { state.driverLocation = nil }
    }
}
