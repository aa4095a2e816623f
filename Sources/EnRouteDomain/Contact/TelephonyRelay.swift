public import EnRouteModels

/// A telephony third party that owns a pool of numbers and connects two parties through them (the platform's relayed
/// number): one session per trip, two participants, each given the proxy number that reaches the other.
///
/// The caller owns the session's lifetime: it closes the session a stated time after the trip ends; the
/// time-to-live given at open is the relay's own safety net, should the close never come.
public protocol TelephonyRelay: Sendable {
    /// A short name for logs (`log`, `twilio-proxy`).
    var name: String { get }
    /// Opens a session for `tripId` that the relay ends by itself after `ttlSeconds` at the latest; returns its id.
    func openSession(tripId: String, ttlSeconds: Int) async throws -> String
    /// Adds a participant by their real number; returns the proxy number they dial to reach the other participant.
    func addParticipant(session: String, number: E164PhoneNumber, label: String) async throws -> E164PhoneNumber
    /// Ends the session: its proxy numbers stop connecting these two numbers.
    func closeSession(_ session: String) async throws
}

/// Why a relay could not do what was asked.
public enum TelephonyRelayError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every pool number is already mapped for this participant.
    case poolExhausted
    /// No such session (or it is closed).
    case unknownSession(String)
    /// The relay's API answered with an error or something unreadable.
    case relay(status: Int, detail: String)
    /// The relay could not be reached.
    case unreachable(String)

    public var description: String {
        switch self {
        case .poolExhausted: "every pool number is in use for this participant"
        case .unknownSession(let id): "no open session \(id)"
        case .relay(let status, let detail): "the relay answered \(status): \(detail)"
        case .unreachable(let detail): "the relay could not be reached: \(detail)"
        }
    }
}
