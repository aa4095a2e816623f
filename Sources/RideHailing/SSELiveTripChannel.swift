public import HTTPTransport
public import EnRouteModels
import Foundation

/// `LiveTripChannel` over `GET /v1/trips/{id}/events` as Server-Sent Events; unknown event names are skipped.
public struct SSELiveTripChannel: LiveTripChannel {
    private let client: any HTTPClient
    private let server: APIServer

    /// A channel that streams through `client` from `server`.
    public init(client: any HTTPClient, server: APIServer) {
        self.client = client
        self.server = server
    }

    /// Opens the trip's SSE feed; the first event is the current trip.
    public func events(tripID: String) -> AsyncThrowingStream<TripEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: TripEvent.self)
        let path = APIPath.tripEvents(tripID)
        let task = Task { [client, server] in
            do {
                let request = await server.request("GET", path, headers: ["Accept": "text/event-stream"])
                for try await message in client.events(request) {
                    if let event = try Self.decode(message) { continuation.yield(event) }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The trip event in one SSE message; nil for a name this client does not know.
    static func decode(_ message: ServerSentEvent) throws -> TripEvent? {
        do {
            return try TripEvent.decode(name: message.event, payload: Data(message.data.utf8))
        } catch {
            throw APIError.undecodable("\(message.event) event \(message.id ?? "without id"): \(error)")
        }
    }
}
