public import Foundation
public import EnRouteModels
public import Observation
import ClientKit

/// The rider's map screen: estimates, request with retries, live tracking and cancel (seed 002).
@MainActor @Observable
public final class TripViewModel {
    /// What the screen shows.
    public private(set) var state = TripViewState()

    @ObservationIgnored private let api: any TripAPI
    @ObservationIgnored private let channel: any LiveTripChannel
    @ObservationIgnored private let clock: any Clock<Duration>
    @ObservationIgnored private let makeKey: @Sendable () -> UUID
    @ObservationIgnored private var machine: TripStateMachine
    @ObservationIgnored private var marker: DriverMarkerAnimator
    @ObservationIgnored private(set) var liveTask: Task<Void, Never>?

    static let requestAttempts = 3
    static let requestFailedMessage = "Could not request a ride. Try again."
    static let cancelFailedMessage = "Couldn't cancel the ride. Try again."
    static let tooLateToCancelMessage = "This ride can no longer be cancelled."
    static let estimatesFailedMessage = "Could not load prices. Try again."

    /// A view model over `api` and `channel`; `clock` times retries, backoff and the marker; `makeKey` makes one idempotency key per tap.
    public init(api: any TripAPI, channel: any LiveTripChannel, clock: any Clock<Duration>, logger: any RideLogger,
                makeKey: @escaping @Sendable () -> UUID = { UUID() }) {
        self.api = api
        self.channel = channel
        self.clock = clock
        self.makeKey = makeKey
        self.machine = TripStateMachine(logger: logger)
        self.marker = DriverMarkerAnimator(clock: clock)
    }

    /// The driver's marker as it should be drawn now, interpolated between reported positions.
    public func markerFrame() -> MarkerFrame? { marker.frame() }

    /// Loads prices for a route into `state.estimates`.
    public func loadEstimates(pickup: Coordinate, dropoff: Coordinate) async {
        do {
            state.estimates = try await api.estimate(pickup: pickup, dropoff: dropoff)
            state.errorMessage = nil
        } catch {
            state.errorMessage = Self.estimatesFailedMessage
        }
    }

    /// Loads free cars near `point`; the map simply shows none when this fails.
    public func loadNearbyDrivers(around point: Coordinate) async {
        state.nearbyDrivers = (try? await api.nearbyDrivers(around: point)) ?? []
    }

    /// Requests a ride: one idempotency key for this tap, 3 attempts 1 s then 2 s apart, then live tracking.
    public func requestRide(_ request: TripRequest) async {
        guard state.canRequest else { return }
        state.isRequesting = true
        state.errorMessage = nil
        defer { state.isRequesting = false }
        let key = makeKey()                                   // reused on retries: at most one trip per tap
        for attempt in 1...Self.requestAttempts {
            do {
                let trip = try await api.requestTrip(request, idempotencyKey: key)
                apply(trip)
                connectLive(tripID: trip.id)
                return
            } catch {
                guard attempt < Self.requestAttempts, !Task.isCancelled else { break }
                do { try await clock.sleep(for: .seconds(attempt)) } catch { break }   // 1 s, then 2 s; or cancelled
            }
        }
        if !Task.isCancelled { state.errorMessage = Self.requestFailedMessage }
    }

    /// Picks up a trip that is already running, for example after the app was relaunched.
    public func restoreActiveTrip() async {
        guard let trip = try? await api.activeTrip() else { return }
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
            apply(try await api.cancel(tripID: tripID))
            if state.trip?.state.isActive != true { stopLive() }
        } catch APIError.problem(let problem) where problem.status == 409 {
            state.errorMessage = Self.tooLateToCancelMessage
        } catch {
            state.errorMessage = Self.cancelFailedMessage
        }
    }

    /// Stops live tracking; call when the screen goes away.
    public func stopLive() {
        liveTask?.cancel()
        liveTask = nil
    }

    /// Waits until live tracking ends: the trip is over or `stopLive()` was called.
    public func waitForLiveToEnd() async {
        await liveTask?.value
    }

    /// Seed 002's live loop: resync, stream, back off min(30, 2^attempt) s; ends when the trip is over.
    /// `requestRide` and `restoreActiveTrip` run it in `liveTask`.
    func liveLoop(tripID: String) async {
        guard machine.trip?.state.isActive == true else { return }
        let loop = LiveTripLoop(api: api, channel: channel, clock: clock)
        await loop.run(tripID: tripID) { event in
            switch event {
            case .tripUpdated(let trip): apply(trip)
            case .driverMoved(let location): move(location)
            }
            return machine.trip?.state.isActive == true
        }
    }

    private func connectLive(tripID: String) {
        guard machine.trip?.state.isActive == true else { return }
        liveTask?.cancel()
        liveTask = Task { await self.liveLoop(tripID: tripID) }
    }

    private func apply(_ trip: Trip) {
        machine.apply(trip)
        state.trip = machine.trip
        if let current = machine.trip { state.liveETA.apply(current) }
    }

    /// Moves the marker, and takes the fix's ETA when it is newer than the one shown (no version change needed).
    private func move(_ location: DriverLocation) {
        if marker.handle(location) != .ignored { state.driverLocation = location }
        state.liveETA.apply(location)
    }
}
