public import Foundation
public import Observation
public import EnRouteModels
public import HTTPTransport

/// What the call button shows (a contact control that disappears after the trip).
public enum TripCallState: Sendable, Equatable {
    /// No button: nobody to call yet, or the trip's calls are over.
    case hidden
    /// The button, ready.
    case available
    /// Asking the server for the number.
    case connecting
    /// The number the dialer was opened with; it reaches the other party of this trip only.
    case dialing(String)
    /// The server said no, in words for the user; the button stays while the trip allows calls.
    case failed(String)
}

/// The call button's model for the customer's and the provider's apps: shown only while the trip allows a call (a
/// provider has accepted; until the stated time after the end), and on a tap asks the server for this caller's relay
/// number (`POST /v1/trips/{id}/call`) and hands it to the dialer. The server is the authority: a "Calls closed"
/// answer hides the button at once.
@MainActor @Observable
public final class TripCallModel {
    public let tripId: String
    /// The one value the button draws.
    public private(set) var state: TripCallState = .hidden
    @ObservationIgnored private let client: any HTTPClient
    @ObservationIgnored private let server: APIServer
    @ObservationIgnored private let dates: any DateProvider
    @ObservationIgnored private let openDialer: @MainActor (String) -> Void
    @ObservationIgnored private let closeAfterEnd: TimeInterval
    @ObservationIgnored private var trip: TripSnapshot?
    @ObservationIgnored private var availableUntil: Date?
    @ObservationIgnored private var closed = false

    /// The states a trip ends in, in either machine.
    static let endStates: Set<String> = ["completed", "cancelled", "noDriversFound", "delivered"]

    /// A model for `tripId`; `openDialer` opens the device's dialer (`tel:`), `closeAfterEnd` is the server's window
    /// after the end (15 minutes unless the server says otherwise in its answer).
    public init(
        tripId: String, client: any HTTPClient, server: APIServer, dates: any DateProvider,
        closeAfterEnd: TimeInterval = 15 * 60, openDialer: @escaping @MainActor (String) -> Void
    ) {
        self.tripId = tripId; self.client = client; self.server = server; self.dates = dates
        self.closeAfterEnd = closeAfterEnd; self.openDialer = openDialer
    }

    /// The trip as last seen (a snapshot from the live stream or a fetch): shows or hides the button.
    public func update(_ trip: TripSnapshot) {
        guard trip.id == tripId else { return }
        self.trip = trip
        refresh()
    }

    /// Re-decides the button at the current time (a screen calls this on its own tick, so it disappears on time).
    public func refresh() {
        guard allowsCall() else { state = .hidden; return }
        if state == .hidden { state = .available }
    }

    /// The tap: the number from the server, then the dialer.
    public func call() async {
        guard allowsCall(), state != .connecting else { return }
        state = .connecting
        do {
            let request = await server.request("POST", APIPath.tripCall(tripId))
            let response = try await client.send(request)
            if response.status == 200, let answer = try? WireCoding.decoder().decode(TripCall.self, from: response.body)
            {
                availableUntil = answer.availableUntil
                state = .dialing(answer.dial)
                openDialer(answer.dial)
                return
            }
            let problem = try? WireCoding.decoder().decode(Problem.self, from: response.body)
            if response.status == 404 || problem?.title == "Calls closed" || problem?.title == "No provider yet" {
                closed = response.status != 409 || problem?.title == "Calls closed"
                state = .hidden
                return
            }
            state = .failed(problem?.detail ?? "The call could not be placed. Try again.")
        } catch {
            state = .failed("You're offline. Try again when you have a connection.")
        }
    }

    private func allowsCall() -> Bool {
        guard !closed, let trip, trip.providerId != nil else { return false }
        guard Self.endStates.contains(trip.status) else { return true }
        let until = availableUntil ?? trip.updatedAt.addingTimeInterval(closeAfterEnd)
        return dates.now() < until
    }
}
