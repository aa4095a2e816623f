import Foundation
import ClientKit
import EnRouteModels
import HTTPEngine

/// The client kit's `ChatConnection` over the Linux tools' WebSocketClient (plain `http://` servers).
struct WebSocketChatConnection: ChatConnection {
    let server: URL
    let token: String

    func open(tripId: String) async throws -> any ChatSocket {
        guard let url = URL(string: APIPath.tripChat(tripId), relativeTo: server)?.absoluteURL else {
            throw CLIError("cannot make the chat URL")
        }
        return WebSocketChatSocket(
            try await WebSocketClient.connect(to: url, headers: [("Authorization", "Bearer \(token)")]))
    }
}

/// One chat socket: the client's text messages read as chat frames.
final class WebSocketChatSocket: ChatSocket {
    let frames: AsyncStream<ChatFrame>
    private let client: WebSocketClient

    init(_ client: WebSocketClient) {
        self.client = client
        let (frames, continuation) = AsyncStream<ChatFrame>.makeStream()
        self.frames = frames
        let reading = Task {
            for await message in client.messages {
                if case .text(let text) = message, let frame = try? ChatFrame.decode(text) { continuation.yield(frame) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            reading.cancel(); client.close()
        }
    }

    func send(_ frame: ChatFrame) async throws { try client.send(text: try frame.text()) }

    func close() { client.close() }
}
