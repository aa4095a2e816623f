public import EnRouteModels
public import EnRouteDomain
import Synchronization
public import EnRouteLogging

/// The default relay: hands out proxy numbers from a configured pool and writes what a real relay would do to the log,
/// never a real number. No call connects; it lets the whole contact flow run on a development machine.
public final class LogTelephonyRelay: TelephonyRelay {
    public let name = "log"
    private struct Session { var tripId: String; var participants: [(real: E164PhoneNumber, proxy: E164PhoneNumber)] }
    private struct State { var sessions: [String: Session] = [:]; var next = 1 }
    private let pool: [E164PhoneNumber]
    private let log: Logger
    private let state = Mutex(State())

    /// A relay over `pool` (in the order numbers are handed out), logging to `log`.
    public init(pool: [E164PhoneNumber], log: Logger) {
        self.pool = pool; self.log = log
    }

    /// The pool `enroute serve` uses without `--telephony-pool`: numbers in the range Ofcom keeps for drama (+44 7700
    /// 900xxx).
    public static let defaultPool: [E164PhoneNumber] = (0..<10).compactMap { E164PhoneNumber("+44770090000\($0)") }

    public func openSession(tripId: String, ttlSeconds: Int) async throws -> String {
        let id = state.withLock { s -> String in
            let id = "LS\(s.next)"
            s.next += 1
            s.sessions[id] = Session(tripId: tripId, participants: [])
            return id
        }
        log.info("telephony (log): session \(id) opened for trip \(tripId), ttl \(ttlSeconds) s")
        return id
    }

    public func addParticipant(session: String, number: E164PhoneNumber, label: String) async throws -> E164PhoneNumber
    {
        let proxy = try state.withLock { s -> E164PhoneNumber in
            guard s.sessions[session] != nil else { throw TelephonyRelayError.unknownSession(session) }
            // A proxy number must name one session for the number that dials it, as with a real relay.
            let taken = Set(s.sessions.values.flatMap { $0.participants.filter { $0.real == number }.map(\.proxy) })
            guard let proxy = pool.first(where: { !taken.contains($0) }) else {
                throw TelephonyRelayError.poolExhausted
            }
            s.sessions[session]!.participants.append((number, proxy))
            return proxy
        }
        log.info("telephony (log): session \(session): the \(label) dials \(proxy.e164)")
        return proxy
    }

    public func closeSession(_ session: String) async throws {
        let tripId = state.withLock { $0.sessions.removeValue(forKey: session)?.tripId }
        guard let tripId else { throw TelephonyRelayError.unknownSession(session) }
        log.info("telephony (log): session \(session) for trip \(tripId) closed")
    }

    /// Sessions open now, for tests.
    public var openSessionCount: Int { state.withLock { $0.sessions.count } }
}
