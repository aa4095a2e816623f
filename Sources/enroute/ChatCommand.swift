import Foundation
import ClientKit
import HTTPTransport
import CurlTransport
import EnRouteModels

/// `enroute chat <trip-id>`: a trip's chat in a terminal, on the client kit's chat view model.
enum ChatCommand {
    static let spec = CommandSpec(
        name: "chat",
        synopsis: """
            Usage: enroute chat <trip-id> [--server URL] [--token T]

            Prints the trip's conversation, then every new message as it arrives over the chat WebSocket, and
            sends each line typed on standard input (through the same outbox the apps use: a line that fails is
            sent again with the same message id). The token's account must be the trip's customer or provider
            (ops read only). Ends when the conversation closes (the trip ended), or on Ctrl-C; a trip that is not
            the account's ends it at once with the server's answer (exit status 1). The WebSocket needs an
            http:// server.
            """, sections: [(nil, Terminal.serverOptions(role: "customer's or provider"))], positionals: 1)

    @MainActor
    static func run(_ args: [String]) async throws -> Int32 {
        let options = try spec.parse(args)
        if options.has("help") { print(spec.helpText); return 0 }
        guard let trip = options.positional.first else {
            throw CLIError("a trip id is required (see `enroute chat --help`)")
        }
        let (url, token) = try Terminal.server(options)
        guard url.scheme == "http" else {
            throw CLIError("--server must be an http:// URL for the chat WebSocket, got '\(url.absoluteString)'")
        }
        let me = role(inToken: token) ?? .customer
        let viewModel = ChatViewModel(
            tripId: trip, me: me,
            api: RemoteChatAPI(
                http: CurlHTTPClient(), server: APIServer(baseURL: url, credentials: StaticAccessToken(token))),
            connection: WebSocketChatConnection(server: url, token: token), clock: ContinuousClock(),
            newMessageId: { UUID().uuidString })
        let running = Task { await viewModel.run() }
        let lines = standardInputLines()
        let typing = Task { @MainActor in
            for await line in lines { await viewModel.send(line) }
        }
        defer { running.cancel(); typing.cancel() }
        var printed: Set<String> = []
        let clock = ContinuousClock()
        while true {
            for line in viewModel.state.lines where !printed.contains(line.id) {
                let who = (line.mine ? me : me.other).rawValue
                switch line.status {
                case .refused(let reason):
                    print("not sent (\(reason)): \(line.text)")
                case .sending, .waiting:
                    continue
                default:
                    print("[\(line.seq ?? 0)] \(who): \(line.text)")
                }
                printed.insert(line.id)
            }
            if let reason = viewModel.state.closedReason {
                print("— the conversation is closed: \(reason)")
                return 0
            }
            if let reason = viewModel.state.unavailableReason {
                FileHandle.standardError.write(Data("enroute chat: \(reason)\n".utf8))
                return 1
            }
            try await clock.sleep(for: .milliseconds(100))
        }
    }

    /// The `role` claim of a bearer token, read without checking it (the server does): who "me" is on screen.
    static func role(inToken token: String) -> ChatRole? {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64),
            let claims = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let role = claims["role"] as? String
        else { return nil }
        return ChatRole(rawValue: role)
    }

    /// Standard input's lines (blank ones skipped), read on a thread of their own.
    static func standardInputLines() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        Thread {
            while let line = readLine() {
                if !line.trimmingCharacters(in: .whitespaces).isEmpty { continuation.yield(line) }
            }
            continuation.finish()
        }.start()
        return stream
    }
}
