import Foundation
import EnRouteDomain
import EnRouteModels
import OrderTracking

/// What the share page shows at one moment: the steps, the ETA and the pin worded by the order tracker's
/// `TrackingFreshnessPolicy` (the kit's own rules) on the server's clock, the provider's first name and the two ends.
/// Nothing else of the account: no names but the provider's first, no price, no payment, no history.
struct ShareView: Encodable, Sendable, Equatable {
    struct Step: Encodable, Sendable, Equatable {
        let title: String
        /// "done", "current" or "upcoming".
        let progress: String
    }

    struct Pin: Encodable, Sendable, Equatable {
        /// "live", "stale" (dimmed, with `label`) or "hidden".
        let state: String
        let lat: Double?
        let lng: Double?
        /// "Updated 40 s ago" when stale.
        let label: String?
        static let hidden = Pin(state: "hidden", lat: nil, lng: nil, label: nil)
    }

    /// "ride" or "delivery".
    let kind: String
    let title: String
    let steps: [Step]
    /// "Arriving 18:42–18:46" · "Running a little late" · "ETA updating" · "Arrival time to follow", or "" once ended.
    let eta: String
    /// "1 stop before yours" while the courier hands over other orders first (deliveries); nil otherwise.
    let stopsBefore: String?
    /// The provider's first name, once one is assigned.
    let provider: String?
    let pin: Pin
    let pickup: Coordinate
    let destination: Coordinate
    /// A cancellation or problem message.
    let banner: String?
    /// True once the trip has ended (delivered, completed, cancelled).
    let ended: Bool
    /// The server's time when this was worded.
    let now: Date
    /// The SSE id this state goes out under: version and fix sequence.
    let eventID: String

    /// The state to send, or nil when it says what `previous` said (only `now` moved).
    func differs(from previous: ShareView?) -> Bool {
        guard let previous else { return true }
        return ShareView(copy: self, now: previous.now) != previous
    }

    private init(copy v: ShareView, now: Date) {
        kind = v.kind; title = v.title; steps = v.steps; eta = v.eta; stopsBefore = v.stopsBefore
        provider = v.provider; pin = v.pin
        pickup = v.pickup; destination = v.destination; banner = v.banner; ended = v.ended; self.now = now;
        eventID = v.eventID
    }

    init(
        kind: String, title: String, steps: [Step], eta: String, provider: String?, pin: Pin, pickup: Coordinate,
        destination: Coordinate, banner: String?, ended: Bool, now: Date, eventID: String, stopsBefore: String? = nil
    ) {
        self.kind = kind; self.title = title; self.steps = steps; self.eta = eta; self.stopsBefore = stopsBefore
        self.provider = provider
        self.pin = pin
        self.pickup = pickup; self.destination = destination; self.banner = banner; self.ended = ended; self.now = now;
        self.eventID = eventID
    }

    static let rideSteps = ["Finding a driver", "Driver on the way", "Driver has arrived", "On the trip", "Arrived"]

    /// The view of `trip` at `now`.
    static func make(_ trip: TripRecord, wire: WireMapping, freshness: TrackingFreshnessPolicy, now: Date) -> ShareView
    {
        let fix = trip.providerFix
        let seq = fix?.seq ?? 0
        let eventID = seq > 0 ? "\(trip.version).\(seq)" : "\(trip.version)"
        let provider = trip.providerId.map { wire.directory.provider(id: $0).firstName }
        let window: ClosedRange<Date>? = zip2(trip.etaEarliest, trip.etaLatest).map { min($0, $1)...max($0, $1) }
        // The server builds this now, so a snapshot's age is the age of what the ETA rests on: the provider's
        // latest fix while one is driving. Its silence for 2 minutes makes the ETA "ETA updating", as in the kit.
        let moving = isMoving(trip.status)
        let reached: Int?
        let titles: [String]
        var banner: String? = trip.status.isActive ? trip.problem : nil
        var title: String
        switch trip.status {
        case .delivery(let s):
            titles = OrderStep.allCases.map(\.title)
            switch s {
            case .placed: reached = 0
            case .picking: reached = 1
            case .onTheWay: reached = 2
            case .arriving: reached = 3
            case .delivered: reached = 4
            case .cancelled: reached = nil
            }
            title = reached.map { titles[$0] } ?? "Cancelled"
        case .ride(let s):
            titles = rideSteps
            switch s {
            case .searching: reached = 0
            case .driverAssigned: reached = 1
            case .driverArrived: reached = 2
            case .onTrip: reached = 3
            case .completed: reached = 4
            case .cancelled, .noDriversFound: reached = nil
            }
            title = reached.map { titles[$0] } ?? (s == .noDriversFound ? "No driver found" : "Cancelled")
        }
        if !trip.status.isActive, reached == nil {
            banner =
                trip.cancellation.map { "Cancelled: \($0.reason)" }
                ?? (title == "Cancelled" ? "This trip was cancelled" : title)
        }
        let steps = titles.enumerated().map { index, name in
            Step(
                title: name,
                progress: reached.map { index < $0 ? "done" : index == $0 ? "current" : "upcoming" } ?? "upcoming")
        }
        let eta: String
        if trip.status.isActive {
            let basis = moving ? (fix?.recordedAt ?? now) : now
            eta = freshness.text(for: freshness.eta(window, generatedAt: basis, now: now))
        } else {
            eta = ""
        }
        var pin = Pin.hidden
        if trip.status.isActive, moving, let fix {
            switch freshness.pin(for: RiderFix(coordinate: fix.shown, recordedAt: fix.recordedAt), now: now) {
            case .live(let f): pin = Pin(state: "live", lat: f.coordinate.lat, lng: f.coordinate.lng, label: nil)
            case .stale(let f, let label):
                pin = Pin(state: "stale", lat: f.coordinate.lat, lng: f.coordinate.lng, label: label)
            case .hidden: pin = .hidden
            }
        }
        if trip.status.isActive, trip.problem != nil { title = reached.map { titles[$0] } ?? title }
        return ShareView(
            kind: trip.kind == .ride ? "ride" : "delivery", title: title, steps: steps, eta: eta,
            provider: provider, pin: pin, pickup: trip.pickup, destination: trip.dropoff, banner: banner,
            ended: !trip.status.isActive, now: now, eventID: eventID,
            stopsBefore: trip.status.isActive ? ETAWording.stopsBefore(trip.stopsBefore) : nil)
    }

    /// True while a provider drives towards the next stop: the pin is shown and the ETA rests on its fixes.
    static func isMoving(_ status: TripStatus) -> Bool {
        switch status {
        case .delivery(let s): s == .onTheWay || s == .arriving
        case .ride(let s): s == .driverAssigned || s == .onTrip
        }
    }

    /// How long until `make` words `trip` differently by time alone (the pin dimming or hiding, the ETA turning late
    /// or "updating"); nil once the trip has ended.
    static func untilNextChange(_ trip: TripRecord, freshness: TrackingFreshnessPolicy, now: Date) -> Duration? {
        guard trip.status.isActive else { return nil }
        let window: ClosedRange<Date>? = zip2(trip.etaEarliest, trip.etaLatest).map { min($0, $1)...max($0, $1) }
        guard isMoving(trip.status), let fix = trip.providerFix else {
            return freshness.untilNextChange(fix: nil, eta: window, generatedAt: now, now: now)
        }
        return freshness.untilNextChange(
            fix: RiderFix(coordinate: fix.shown, recordedAt: fix.recordedAt), eta: window,
            generatedAt: fix.recordedAt, now: now)
    }

    private static func zip2(_ a: Date?, _ b: Date?) -> (Date, Date)? {
        guard let a, let b else { return nil }
        return (a, b)
    }
}
