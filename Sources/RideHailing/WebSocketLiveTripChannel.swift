#if canImport(Darwin)
public import Foundation
public import HTTPTransport
public import EnRouteModels

/// `LiveTripChannel` over a WebSocket (`wss://…/v1/trips/{id}`), one `LiveEnvelope` per frame.
///
/// Apple platforms only: Linux's URLSession has no WebSocket client, so Linux tools use `SSELiveTripChannel`.
public struct WebSocketLiveTripChannel: LiveTripChannel {
    private let session: URLSession
    private let baseURL: URL
    private let credentials: any AccessTokenProviding

    /// A channel to the real-time host `baseURL` (for example `wss://rt.example.com`) over `session`.
    public init(baseURL: URL, credentials: any AccessTokenProviding, session: URLSession) {
        self.baseURL = baseURL
        self.credentials = credentials
        self.session = session
    }

    /// Opens the trip's socket; stopping the iteration closes it.
    public func events(tripID: String) -> AsyncThrowingStream<TripEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: TripEvent.self)
        // The path is already percent-encoded: appending it must not encode it again.
        let url = URL(string: APIPath.trip(tripID), relativeTo: baseURL)?.absoluteURL ?? baseURL
        let task = Task { [session, credentials] in
            var request = URLRequest(url: url)
            if let token = await credentials.accessToken() {
                request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            }
            let socket = session.webSocketTask(with: request)
            socket.resume()
            do {
                while true {
                    // receive() ignores task cancellation; closing the socket is what ends it.
                    let message = try await withTaskCancellationHandler {
                        try await socket.receive()
                    } onCancel: {
                        socket.cancel(with: .goingAway, reason: nil)
                    }
                    let frame: Data
                    switch message {
                    case .string(let text): frame = Data(text.utf8)
                    case .data(let data): frame = data
                    @unknown default: continue
                    }
                    if let event = try TripEvent.decode(envelope: frame) { continuation.yield(event) }
                }
            } catch {
                socket.cancel(with: .goingAway, reason: nil)
                continuation.finish(throwing: Task.isCancelled ? CancellationError() : error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
#endif
