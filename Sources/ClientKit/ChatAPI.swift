public import Foundation
public import EnRouteModels
public import HTTPTransport

/// The chat's REST pair as the chat view model needs it (the caller's narrow promise).
public protocol ChatAPI: Sendable {
    /// `POST /v1/trips/{id}/messages`: the stored message (a resend of `messageId` answers the first copy).
    func send(tripId: String, messageId: String, text: String) async throws -> ChatMessage
    /// `GET /v1/trips/{id}/messages?after=`: the next page of the conversation.
    func history(tripId: String, after: Int64) async throws -> ChatHistory
}

/// `ChatAPI` over the client kit's transport.
public struct RemoteChatAPI: ChatAPI {
    private let http: any HTTPClient
    private let server: APIServer

    public init(http: any HTTPClient, server: APIServer) { self.http = http; self.server = server }

    public func send(tripId: String, messageId: String, text: String) async throws -> ChatMessage {
        let request = try await server.request(
            "POST", APIPath.tripMessages(tripId), json: ChatMessageRequest(messageId: messageId, text: text))
        return try await http.send(request).decode(ChatMessage.self)
    }

    public func history(tripId: String, after: Int64) async throws -> ChatHistory {
        try await http.send(await server.request("GET", APIPath.tripMessages(tripId, after: after))).decode(
            ChatHistory.self)
    }
}

/// The live half of a trip's chat (`GET /v1/trips/{id}/chat`), behind which a WebSocket lives: URLSession's on Apple
/// platforms, the Linux tools' own elsewhere, a fake in tests.
public protocol ChatConnection: Sendable {
    /// Opens the trip's chat socket; throws when it cannot (the view model tries again later).
    func open(tripId: String) async throws -> any ChatSocket
}

/// One open chat socket.
public protocol ChatSocket: Sendable {
    /// Frames from the server; finishes when the socket closes.
    var frames: AsyncStream<ChatFrame> { get }
    /// Sends a frame (`typing`, `delivered`, `read`; messages go through `ChatAPI`).
    func send(_ frame: ChatFrame) async throws
    /// Closes the socket.
    func close()
}
