import Foundation
import HTTPEngine
import EnRouteDomain
import EnRouteModels

extension EnRouteAPI {
    /// Issue 15: a trip's chat for its customer and provider (ops read only; 404 for anyone else on every path):
    /// `POST`/`GET …/messages` and the live `GET …/chat` WebSocket.
    func addChatRoutes(_ r: inout Router, _ chat: ChatService) {
        r.post(APIPath.Template.tripMessages) { req in
            let account = try auth.account(for: req)
            let id = try req.parameter("id")
            // Seen before decoding: invalid UTF-8 is the message's problem (422), not a malformed body.
            try Self.chat { _ = try chat.access(id, for: account) }
            guard String(validating: req.body, as: UTF8.self) != nil else {
                throw Self.httpError(ChatError.invalidUTF8)
            }
            let body = try req.decode(ChatMessageRequest.self)
            let (message, created) = try await Self.chatAsync {
                try await chat.send(id, messageId: body.messageId, text: body.text, by: account)
            }
            return try .json(message, status: created ? 201 : 200)
        }
        r.get(APIPath.Template.tripMessages) { req in
            let account = try auth.account(for: req)
            let id = try req.parameter("id")
            var after: Int64 = 0
            if let text = req.query["after"] {
                guard let value = Int64(text), value >= 0 else {
                    throw HTTPError.invalid("/after", "must be a whole number, 0 or more")
                }
                after = value
            }
            return try .json(try await Self.chatAsync { try await chat.history(id, for: account, after: after) })
        }
        r.get(APIPath.Template.tripChat) { req in
            let account = try auth.account(for: req)
            let id = try req.parameter("id")
            let access = try Self.chat { try chat.access(id, for: account).access }
            guard req.isWebSocketUpgrade else {
                var e = HTTPError(
                    status: 426, title: "Upgrade Required", detail: "This path is a WebSocket: send Upgrade: websocket."
                )
                e.headers.set("Upgrade", "websocket")
                throw e
            }
            let role: ChatRole? = if case .party(let role) = access { role } else { nil }
            return .webSocket { ws in await Self.chatSession(ws, chat: chat, tripId: id, account: account, role: role) }
        }
    }

    /// One chat socket: the history, then live frames both ways until the conversation closes or the client leaves.
    static func chatSession(_ ws: WebSocket, chat: ChatService, tripId: String, account: Account, role: ChatRole?) async
    {
        func send(_ frame: ChatFrame) { if let text = try? frame.text() { try? ws.send(text: text) } }
        // Listening starts before the history is read, so nothing written in between is missed.
        let live = chat.listen(tripId, role: role)
        var last: Int64 = 0
        do {
            while true {
                let page = try await chat.history(tripId, for: account, after: last)
                for message in page.messages { send(.message(message)); last = message.seq }
                if page.closed {
                    send(.closed(reason: page.reason ?? "The conversation is closed."))
                    ws.close()
                    return
                }
                if !page.hasMore { break }
            }
        } catch {
            send(.error(httpError(error).problem, messageId: nil))
            ws.close(code: WebSocketCloseCode.policyViolation)
            return
        }
        let sent = last
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await frame in live {
                    if case .message(let message) = frame, message.seq <= sent { continue }
                    send(frame)
                }
                // The conversation closed, the party lost the trip, or this socket fell too far behind: the client
                // resyncs.
                ws.close()
            }
            group.addTask {
                for await incoming in ws.messages {
                    await handle(incoming, ws: ws, chat: chat, tripId: tripId, account: account, reply: send)
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// One frame from the client: a message to store, a signal to pass on, or an error frame back.
    static func handle(
        _ incoming: WebSocketMessage, ws: WebSocket, chat: ChatService, tripId: String, account: Account,
        reply: (ChatFrame) -> Void
    ) async {
        let text: String
        switch incoming {
        case .text(let t): text = t
        case .binary(let bytes):
            guard let t = String(validating: bytes, as: UTF8.self) else {
                return reply(.error(httpError(ChatError.invalidUTF8).problem, messageId: nil))
            }
            text = t
        }
        let frame: ChatFrame
        do { frame = try ChatFrame.decode(text) } catch {
            return reply(
                .error(
                    HTTPError.badRequest("Each frame is a JSON object with a type: send, typing, delivered or read.")
                        .problem, messageId: nil))
        }
        switch frame {
        case .send(let messageId, let body):
            do {
                let (message, created) = try await chat.send(tripId, messageId: messageId, text: body, by: account)
                // A new message reaches this socket through the live fan-out; a resend is acknowledged here.
                if !created { reply(.message(message)) }
            } catch {
                reply(.error(httpError(error).problem, messageId: messageId))
            }
        case .typing, .delivered, .read:
            do { try chat.signal(tripId, frame, by: account) } catch {
                reply(.error(httpError(error).problem, messageId: nil))
            }
        case .message, .error, .closed:
            reply(
                .error(
                    HTTPError.invalid("/type", "a client sends send, typing, delivered or read").problem, messageId: nil
                ))
        }
    }

    static func chat<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw httpError(error) }
    }

    static func chatAsync<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw httpError(error) }
    }

    /// The problem for a chat refusal (other errors pass through as they are, or as a bare 500).
    static func httpError(_ error: any Error) -> HTTPError {
        if let http = error as? HTTPError { return http }
        guard let chat = error as? ChatError else { return .internalError }
        switch chat {
        case .notFound: return .notFound("No such trip.")
        case .readOnly: return .forbidden("Ops read a trip's chat but do not write in it.")
        case .invalidUTF8: return .invalid("/text", "is not valid UTF-8")
        case .empty: return .invalid("/text", "must not be empty")
        case .nul: return .invalid("/text", "must not contain U+0000")
        case .tooLong(let limit):
            return HTTPError(
                status: 413, title: "Content Too Large", detail: "A message is at most \(limit) bytes of UTF-8.",
                errors: [Problem.FieldError(pointer: "/text", detail: "is over \(limit) bytes")])
        case .invalidMessageId:
            return .invalid(
                "/messageId", "must be 1 to \(ChatPolicy.maxMessageIdBytes) bytes without spaces or control characters")
        case .messageIdReused:
            return .invalid("/messageId", "was used already for a different text; make a new id for a new message")
        case .rateLimited(let retryAfter):
            var h = HTTPHeaders()
            h.add("Retry-After", String(max(1, Int(retryAfter.rounded(.up)))))
            return HTTPError(
                status: 429, title: "Too Many Requests",
                detail: "Too many messages at once; this one was not sent. Send it again shortly.",
                headers: h)
        case .closed(let reason): return HTTPError(status: 409, title: "Conversation Closed", detail: reason)
        }
    }
}
