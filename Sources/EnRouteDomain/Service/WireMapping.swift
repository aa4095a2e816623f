public import Foundation
public import EnRouteModels

/// Turns the backend's trip record into each audience's wire shape.
public struct WireMapping: Sendable {
    public let directory: any PartyDirectory
    /// The customers' average rating of a provider, when anyone rated them (else the profile's).
    public let rating: @Sendable (String) -> Double?
    public init(directory: any PartyDirectory, rating: @escaping @Sendable (String) -> Double? = { _ in nil }) {
        self.directory = directory; self.rating = rating
    }

    /// The wire `Trip`, for the rider.
    public func ride(_ trip: TripRecord, now: Date) -> Trip {
        let state: TripState
        if case .ride(let s) = trip.status { state = s } else { state = .searching }
        let eta = Self.secondsLeft(trip, now: now)
        return Trip(
            id: trip.id, state: state, pickup: trip.pickup, dropoff: trip.dropoff,
            driver: trip.providerId.map { driver($0) }, etaSeconds: eta,
            fare: trip.fare ?? trip.quote, version: trip.version, scheduledFor: trip.scheduledFor,
            matchingStartedAt: trip.matchingStartedAt)
    }

    /// The driver as the rider sees them, rated by the customers' average once anyone rated them.
    func driver(_ provider: String) -> Driver {
        let d = directory.provider(id: provider).driver
        guard let average = rating(provider) else { return d }
        return Driver(
            id: d.id, name: d.name, carModel: d.carModel, plate: d.plate, rating: average, photoURL: d.photoURL)
    }

    /// The order tracker's tracking snapshot, for the customer of a delivery.
    public func tracking(_ trip: TripRecord, now: Date) -> TrackingDTO {
        var status: OrderStatusWire = .placed
        if case .delivery(let s) = trip.status { status = OrderStatusWire(rawValue: s.rawValue) ?? .placed }
        var message: String?
        if let problem = trip.problem, trip.status.isActive {
            status = .problem
            message = problem
        } else if status == .cancelled {
            message = trip.cancellation?.reason
        }
        // The window as estimated (each estimate opens at least a minute ahead). It is not moved on when read later: a
        // window whose latest end has passed is how the tracker knows to say "Running a little late" (the order
        // tracker's freshness rules are the client's).
        let eta: TrackingDTO.ETA? = zip(trip.etaEarliest, trip.etaLatest).map {
            TrackingDTO.ETA(earliest: $0, latest: $1)
        }
        var rider: TrackingDTO.Rider?
        // The rider is shown once she has left the hub.
        if case .delivery(let s) = trip.status, s == .onTheWay || s == .arriving, let provider = trip.providerId,
            let fix = trip.providerFix
        {
            rider = TrackingDTO.Rider(
                firstName: directory.provider(id: provider).firstName, lat: fix.shown.lat, lng: fix.shown.lng,
                recordedAt: fix.recordedAt)
        }
        return TrackingDTO(
            orderId: trip.id, version: trip.version, status: status, problem: message, eta: eta, rider: rider,
            destination: trip.dropoff, generatedAt: now, stopsBefore: trip.stopsBefore)
    }

    /// The least seconds a ride's `etaSeconds` shows while the trip is on (never "0 min", never negative).
    public static let minimumETA: TimeInterval = 60

    /// Seconds from `now` to the window's latest end, at least `minimumETA` while the trip is on.
    static func secondsLeft(_ trip: TripRecord, now: Date) -> Int? {
        trip.etaLatest.map { latest in
            let seconds = Int(latest.timeIntervalSince(now).rounded(.up))
            return trip.status.isActive ? max(Int(Self.minimumETA), seconds) : max(0, seconds)
        }
    }

    /// The party-neutral view for providers, merchants and ops.
    public func snapshot(_ trip: TripRecord) -> TripSnapshot {
        var snapshot = TripSnapshot(
            id: trip.id, kind: trip.kind.rawValue, version: trip.version, status: trip.status.name,
            problem: trip.problem,
            pickup: trip.pickup, dropoff: trip.dropoff, providerId: trip.providerId, merchantId: trip.merchantId,
            merchantStep: trip.merchantStep?.rawValue, readyAt: trip.readyAt, items: trip.items,
            productID: trip.productID,
            etaEarliest: trip.etaEarliest, etaLatest: trip.etaLatest, cancelledBy: trip.cancellation?.by.rawValue,
            cancelReason: trip.cancellation?.reason, createdAt: trip.createdAt, updatedAt: trip.updatedAt)
        snapshot.matchedDistanceMeters = trip.matchedDistanceMeters
        snapshot.matchedDurationSeconds = trip.matchedDurationSeconds
        snapshot.fare = trip.fare ?? trip.quote
        snapshot.payment = trip.payment?.state
        snapshot.scheduledFor = trip.scheduledFor
        snapshot.matchingStartedAt = trip.matchingStartedAt
        snapshot.tip = trip.tip.flatMap { $0.state == .failed ? nil : $0.amount }
        return snapshot
    }

    /// The view of the trip's courier: the party-neutral one with the stops left over every order they carry with it.
    public func courierSnapshot(_ trip: TripRecord) -> TripSnapshot {
        var snapshot = snapshot(trip)
        snapshot.stops = trip.stops
        return snapshot
    }

    /// The rider's view of the driver's latest fix, with the ETA the server computed for it (seconds counted from
    /// `now`).
    public func driverLocation(_ trip: TripRecord, now: Date) -> DriverLocation? {
        let eta = Self.secondsLeft(trip, now: now)
        return trip.providerFix.map {
            DriverLocation(
                coordinate: $0.shown, heading: $0.heading, timestamp: $0.recordedAt, seq: $0.seq,
                etaSeconds: eta, etaLatest: trip.etaLatest)
        }
    }
}

private func zip<A, B>(_ a: A?, _ b: B?) -> (A, B)? {
    guard let a, let b else { return nil }
    return (a, b)
}
