public import EnRouteDomain
import Foundation
import HTTPEngine
import EnRouteModels

/// The live streams of trips (`GET /v1/trips/{id}/events`, `GET /v1/orders/{id}/events` and the
/// ride's WebSocket): one group per watched trip, fed by the trip service's hub. Each change is
/// encoded once and written to every watcher of the trip from the committing thread.
///
/// A ride's watchers get `tripUpdated` on every version and `driverMoved` on every new fix (with that fix's ETA); an
/// order's get a `tracking` snapshot on either. The first events are always the current trip (the
/// resync), so `Last-Event-ID` needs no replay; a finished trip's streams end after its final state.
final class TripLiveStreams: Sendable {
    /// A group's shared state: the newest record seen, and what its members have been sent.
    struct State: Sendable {
        var latest: TripRecord
        var sentVersion: Int
        var sentSeq: Int64
        /// The latest end of the window last sent: a new road route moves an order's ETA without a version or a fix.
        var sentETA: Date?

        /// A group starts where its first member's opening leaves it: everything in `latest` sent.
        init(latest: TripRecord) {
            self.latest = latest
            sentVersion = latest.version
            sentSeq = latest.providerFix?.seq ?? 0
            sentETA = latest.etaLatest
        }

        /// Takes in a published record: the highest version wins, and a newer fix is kept either way,
        /// with the ETA computed for it when it belongs to the same version (an older version's ETA may aim elsewhere).
        mutating func merge(_ trip: TripRecord) {
            let newerFix = (trip.providerFix?.seq ?? 0) > (latest.providerFix?.seq ?? 0)
            if trip.version > latest.version {
                let fix = newerFix ? trip.providerFix : latest.providerFix
                latest = trip
                latest.providerFix = fix
            } else if newerFix {
                latest.providerFix = trip.providerFix
                if trip.version == latest.version {
                    latest.etaEarliest = trip.etaEarliest
                    latest.etaLatest = trip.etaLatest
                }
            } else if trip.version == latest.version, trip.providerFix?.seq == latest.providerFix?.seq {
                // The same version and fix with a window from a new road route.
                latest.etaEarliest = trip.etaEarliest
                latest.etaLatest = trip.etaLatest
            }
        }
    }

    private let channels: LiveChannels<String, State>

    init(service: TripService, wire: WireMapping) {
        // The service owns the hub that holds the listener below, so every closure here holds the
        // service weakly: a strong capture would make a cycle that keeps the whole backend alive.
        channels = LiveChannels(
            initial: { [weak service] id in (try? service?.cached(id)).map { State(latest: $0) } },
            opening: { [weak service] state in
                guard let service else { return LiveUpdate(ends: true) }
                // A joining member has been sent nothing yet.
                var fresh = state
                fresh.sentVersion = 0
                fresh.sentSeq = 0
                return LiveUpdate(
                    events: Self.events(&fresh, wire: wire, now: service.currentTime()),
                    ends: !state.latest.status.isActive)
            },
            revocation: { state in LiveUpdate(events: [Self.accessEnded(state.latest)]) })
        // A batch of fixes is one update: each step's events, framed together, one write per watcher.
        service.hub.onPublish { [channels, weak service] steps in
            guard let service, let id = steps.first?.id else { return }
            channels.publish(id) { state in
                let now = service.currentTime(), before = state.latest.version
                var events: [LiveEvent] = []
                for trip in steps {
                    state.merge(trip)
                    events += Self.events(&state, wire: wire, now: now)
                }
                // A new version may have a new provider: who may watch is decided again before it goes out.
                return LiveUpdate(
                    events: events, ends: !state.latest.status.isActive,
                    revalidates: state.latest.version != before)
            }
        }
    }

    /// The live answer for `trip`, which `account` may see: SSE, or WebSocket when the request upgrades. It lasts
    /// while the account stays a party to the trip; a version that leaves it out ends the stream (`accessEnded`, or a
    /// 1008 close) before anything of that version goes out.
    func stream(_ request: HTTPRequest, trip: TripRecord, for account: Account) -> HTTPResponse {
        let checked = trip.version
        // A group's state may be a version behind the one just checked (a commit between the cache and its publish):
        // that check is the newer word until the group catches up.
        return channels.stream(request, key: trip.id) { state in
            state.latest.version < checked || state.latest.isVisible(to: account)
        }
    }

    /// The last event of a watcher who is no longer a party to `trip`.
    static func accessEnded(_ trip: TripRecord) -> LiveEvent {
        let body = AccessEnded(tripId: trip.id, reason: "You are no longer a party to this trip.")
        let data = (try? WireCoding.encoder().encode(body)).map(Array.init) ?? []
        return LiveEvent(name: LiveEventName.accessEnded.rawValue, id: "\(trip.version)", data: data)
    }

    /// Streams following the trip now.
    func watcherCount(_ tripId: String) -> Int { channels.memberCount(tripId) }

    /// The events `state.latest` owes members that have had `sentVersion`/`sentSeq`, which it then advances.
    static func events(_ state: inout State, wire: WireMapping, now: Date) -> [LiveEvent] {
        let trip = state.latest
        let seq = trip.providerFix?.seq ?? 0
        var out: [LiveEvent] = []
        switch trip.kind {
        case .ride:
            if trip.version > state.sentVersion, let data = try? WireCoding.encoder().encode(wire.ride(trip, now: now))
            {
                out.append(
                    LiveEvent(name: LiveEventName.tripUpdated.rawValue, id: "\(trip.version)", data: Array(data)))
            }
            if let location = wire.driverLocation(trip, now: now), location.seq > state.sentSeq, trip.status.isActive,
                let data = try? WireCoding.encoder().encode(location)
            {
                out.append(
                    LiveEvent(
                        name: LiveEventName.driverMoved.rawValue, id: "\(trip.version).\(location.seq)",
                        data: Array(data)))
            }
        case .delivery:
            if trip.version > state.sentVersion || seq > state.sentSeq || trip.etaLatest != state.sentETA {
                out.append(
                    LiveEvent(
                        name: LiveEventName.tracking.rawValue,
                        id: seq > 0 ? "\(trip.version).\(seq)" : "\(trip.version)",
                        data: TrackingJSON.encode(wire.tracking(trip, now: now))))
            }
        }
        state.sentVersion = max(state.sentVersion, trip.version)
        state.sentSeq = max(state.sentSeq, seq)
        state.sentETA = trip.etaLatest
        return out
    }
}
