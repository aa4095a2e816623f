public import Foundation
public import EnRouteModels
import Synchronization
public import EnRouteLogging

/// When a trip allows a relayed call, and how long its session lives.
public struct CallPolicy: Sendable, Equatable {
    /// The session closes this long after the trip ends, and calls are refused from then on (default 15 min).
    public var closeAfterEnd: TimeInterval = 15 * 60
    /// The time-to-live each session is opened with at the relay, a net should the close never come (default 6 h).
    public var sessionTTL: TimeInterval = 6 * 3600
    /// How often the closer looks for sessions that are due (default 30 s); a trip's end wakes it at once.
    public var sweepInterval: Duration = .seconds(30)
    public init() {}
}

/// Why a call was refused; each is a clear problem for the caller.
public enum CallRefusal: Error, Sendable, Equatable {
    /// Not the trip's customer or provider (answered as 404: the trip is not theirs to see).
    case notAParty
    /// Nobody has accepted the trip yet.
    case noProvider
    /// The trip ended longer ago than the policy allows.
    case closed(endedAt: Date)
    /// The caller has not given a phone number.
    case callerHasNoNumber
    /// The other party has not given one.
    case otherHasNoNumber(Party)
    /// The relay failed; try again.
    case relayUnavailable(String)
}

/// The platform's relayed number: `call` gives a party the number that reaches the other for this trip only, opening
/// the trip's relay session once and reusing it for the trip's life; `run` closes each session a stated time after its
/// trip ends (on the injected clock). No real number leaves this type except towards the relay.
public final class TripCalls: Sendable {
    private let service: TripService
    private let relay: any TelephonyRelay
    private let sessions: any ContactSessionStore
    private let phones: any PhoneBook
    public let policy: CallPolicy
    private let now: @Sendable () -> Date
    private let log: Logger
    private let loop: PollLoop
    /// Opens in flight per trip, so two parties calling at once share one session.
    private let opening = Mutex<[String: Task<ContactSession, any Error>]>([:])

    public init(
        service: TripService, relay: any TelephonyRelay, sessions: any ContactSessionStore, phones: any PhoneBook,
        policy: CallPolicy = CallPolicy(), clock: any Clock<Duration>, now: @escaping @Sendable () -> Date,
        log: Logger
    ) {
        self.service = service; self.relay = relay; self.sessions = sessions; self.phones = phones; self.policy = policy
        self.now = now; self.log = log
        loop = PollLoop(clock: clock, interval: policy.sweepInterval)
    }

    /// The number `account` dials to reach the other party of `tripId`: their own proxy number in the trip's session.
    public func call(_ tripId: String, by account: Account) async throws(CallRefusal) -> TripCall {
        guard let trip = try? service.cached(tripId), let party = Self.party(account, of: trip) else {
            throw .notAParty
        }
        guard let providerId = trip.providerId else { throw .noProvider }
        var closesAt: Date?
        if !trip.status.isActive {
            let ended = endedAt(trip)
            guard now() < ended.addingTimeInterval(policy.closeAfterEnd) else { throw .closed(endedAt: ended) }
            closesAt = ended.addingTimeInterval(policy.closeAfterEnd)
        }
        let session: ContactSession
        do {
            session = try await openOrReuse(trip, providerId: providerId, party: party)
        } catch let refusal as CallRefusal {
            throw refusal
        } catch {
            log.warning("calls: trip \(tripId): the relay failed: \(error)")
            throw .relayUnavailable("\(error)")
        }
        return TripCall(
            tripId: tripId, dial: party == .customer ? session.customerDials : session.providerDials,
            availableUntil: closesAt ?? session.closesAt)
    }

    /// Runs the closer until cancelled: each pass closes the sessions that are due.
    public func run() async { await loop.run { [weak self] in await self?.closeDue() } }

    /// Ends the closer's pause now (a trip just ended).
    public func wake() { loop.wake() }

    /// Whether a committed change may close a relay session: the trip ended, or its provider changed.
    public static func mayCloseSessions(from old: TripRecord?, to new: TripRecord) -> Bool {
        old?.status.isActive == true && !new.status.isActive
            || old?.providerId != nil && old?.providerId != new.providerId
    }

    /// One pass: a session whose trip ended `closeAfterEnd` ago, whose trip changed provider, or whose trip is gone
    /// is closed at the relay and marked closed; a session whose trip just ended gets its closing time.
    public func closeDue() async {
        guard let open = try? await sessions.openSessions() else { return }
        let at = now()
        for var session in open {
            let trip = try? service.cached(session.tripId)
            var due = trip == nil || trip?.providerId != session.providerId
            if let trip, !due, !trip.status.isActive {
                let closesAt = endedAt(trip).addingTimeInterval(policy.closeAfterEnd)
                due = at >= closesAt
                if !due, session.closesAt != closesAt {
                    session.closesAt = closesAt
                    try? await sessions.save(session)
                }
            }
            guard due else { continue }
            do {
                try await relay.closeSession(session.relaySessionId)
            } catch TelephonyRelayError.unknownSession {
                // Already gone at the relay (its time-to-live, or a relay restart): nothing connects any more.
            } catch {
                log.warning(
                    Logger.Message(
                        "calls: could not close session \(session.relaySessionId) of trip \(session.tripId) (will "
                            + "retry): \(error)"
                    ))
                continue
            }
            session.closesAt = session.closesAt ?? at
            session.closedAt = at
            try? await sessions.save(session)
            log.info("calls: session \(session.relaySessionId) of trip \(session.tripId) closed")
        }
    }

    // MARK: - Sessions

    private func openOrReuse(_ trip: TripRecord, providerId: String, party: Party) async throws -> ContactSession {
        if let open = try await sessions.openSession(tripId: trip.id), open.providerId == providerId { return open }
        let task: Task<ContactSession, any Error> = opening.withLock { inFlight in
            if let task = inFlight[trip.id] { return task }
            let task = Task { try await self.open(trip, providerId: providerId, caller: party) }
            inFlight[trip.id] = task
            return task
        }
        defer { _ = opening.withLock { $0.removeValue(forKey: trip.id) } }
        return try await task.value
    }

    private func open(_ trip: TripRecord, providerId: String, caller: Party) async throws -> ContactSession {
        if let open = try await sessions.openSession(tripId: trip.id) {
            if open.providerId == providerId { return open }
            // The trip has another provider now: the old mapping ends before the new one starts.
            try? await relay.closeSession(open.relaySessionId)
            var closed = open
            closed.closedAt = now(); closed.closesAt = closed.closesAt ?? closed.closedAt
            try await sessions.save(closed)
        }
        let customer = Account(id: trip.customerId, role: .customer),
            provider = Account(id: providerId, role: .provider)
        guard let customerNumber = phones.phoneNumber(of: customer) else {
            throw caller == .customer ? CallRefusal.callerHasNoNumber : .otherHasNoNumber(.customer)
        }
        guard let providerNumber = phones.phoneNumber(of: provider) else {
            throw caller == .provider ? CallRefusal.callerHasNoNumber : .otherHasNoNumber(.provider)
        }
        let id = try await relay.openSession(tripId: trip.id, ttlSeconds: Int(policy.sessionTTL))
        do {
            let customerDials = try await relay.addParticipant(session: id, number: customerNumber, label: "customer")
            let providerDials = try await relay.addParticipant(session: id, number: providerNumber, label: "provider")
            let session = ContactSession(
                relaySessionId: id, tripId: trip.id, customerId: trip.customerId, providerId: providerId,
                customerDials: customerDials.e164, providerDials: providerDials.e164, openedAt: now())
            try await sessions.save(session)
            log.info("calls: session \(id) opened for trip \(trip.id)")
            return session
        } catch {
            // Half a session connects nobody: close it rather than leave a mapping behind.
            try? await relay.closeSession(id)
            throw error
        }
    }

    // MARK: - Rules

    /// The role `account` plays in a call on `trip`: its customer or its provider; nobody else (ops and merchants
    /// included).
    static func party(_ account: Account, of trip: TripRecord) -> Party? {
        switch account.role {
        case .customer where trip.customerId == account.id: .customer
        case .provider where trip.providerId == account.id && trip.providerId != nil: .provider
        default: nil
        }
    }

    /// When `trip` ended, from its change log (its last change when the log has no end).
    private func endedAt(_ trip: TripRecord) -> Date {
        let changes = (try? service.store.changes(tripId: trip.id)) ?? []
        return TripTimeline(trip: trip, changes: changes).endedAt ?? trip.updatedAt
    }
}
