import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import HTTPEngine
import TestSupport

/// The chat's WebSocket on a real in-process server, with the Linux tools' WebSocketClient at both ends.
@Suite(.serialized, .timeLimit(.minutes(1))) struct ChatLiveTests {
    struct Live {
        let backend: TestBackend
        let server: HTTPServer
        let trip: String

        func socket(_ account: String, _ role: Party) async throws -> WebSocketClient {
            try await WebSocketClient.connect(
                to: URL(string: "ws://127.0.0.1:\(server.port)\(APIPath.tripChat(trip))")!,
                headers: [("Authorization", "Bearer \(backend.token(account, role))")])
        }
    }

    func makeSUT() async throws -> Live {
        let backend = TestBackend()
        let trip = try await backend.requestRide("c1")
        try #require(await backend.assign(trip.id, to: "p1").status == 200)
        var config = HTTPServerConfiguration()
        config.port = 0
        let server = HTTPServer(router: backend.router, configuration: config)
        try server.start()
        return Live(backend: backend, server: server, trip: trip.id)
    }

    /// The next chat frame on a socket; nil when it closed.
    func next(_ frames: inout AsyncStream<WebSocketMessage>.Iterator) async throws -> ChatFrame? {
        guard let message = await frames.next() else { return nil }
        guard case .text(let text) = message else { throw Failure("a binary frame") }
        return try ChatFrame.decode(text)
    }

    @Test func customerAndProviderTalkBothWaysWithTypingAndReceipts() async throws {
        let live = try await makeSUT()
        let customer = try await live.socket("c1", .customer), provider = try await live.socket("p1", .provider)
        var fromServerToCustomer = customer.messages.makeAsyncIterator(),
            fromServerToProvider = provider.messages.makeAsyncIterator()
        let chat = live.backend.backend.chat
        try await eventually("both parties are connected", within: .seconds(30)) {
            chat.isListening(live.trip, role: .customer) && chat.isListening(live.trip, role: .provider)
        }

        try customer.send(text: try ChatFrame.send(messageId: "c-1", text: "Blue door, 3rd floor").text())
        let delivered = try await next(&fromServerToProvider)
        guard case .message(let message) = delivered else {
            throw Failure("provider got \(String(describing: delivered))")
        }
        #expect(
            message.text == "Blue door, 3rd floor" && message.from == .customer && message.seq == 1
                && message.messageId == "c-1")
        #expect(
            try await next(&fromServerToCustomer) == .message(message), "the sender's own copy is its acknowledgement")

        try provider.send(text: try ChatFrame.typing(from: nil).text())
        #expect(try await next(&fromServerToCustomer) == .typing(from: .provider))
        try provider.send(text: try ChatFrame.delivered(seq: 1, from: nil).text())
        try provider.send(text: try ChatFrame.read(seq: 1, from: .customer).text())  // `from` is the server's to say
        #expect(try await next(&fromServerToCustomer) == .delivered(seq: 1, from: .provider))
        #expect(try await next(&fromServerToCustomer) == .read(seq: 1, from: .provider))

        try provider.send(text: try ChatFrame.send(messageId: "p-1", text: "On my way").text())
        guard case .message(let reply) = try await next(&fromServerToCustomer) else { throw Failure("no reply") }
        #expect(reply.seq == 2 && reply.from == .provider)
        #expect(try await next(&fromServerToProvider) == .message(reply))

        // A blocked message comes back as an error frame with the REST route's problem, naming the message.
        try customer.send(text: try ChatFrame.send(messageId: "c-2", text: String(repeating: "x", count: 2001)).text())
        guard case .error(let problem, let id) = try await next(&fromServerToCustomer) else {
            throw Failure("no error frame")
        }
        #expect(problem.status == 413 && id == "c-2")

        // A late joiner gets the history first; the end closes every socket with the reason.
        let ops = try await live.socket("ops", .ops)
        var toOps = ops.messages.makeAsyncIterator()
        #expect(try await next(&toOps) == .message(message))
        #expect(try await next(&toOps) == .message(reply))
        try await eventually("ops is connected", within: .seconds(30)) { chat.listenerCount(live.trip) == 3 }
        for step in ["driverArrived", "onTrip", "completed"] {
            #expect(await live.backend.step(live.trip, step).status == 200)
        }
        for iterator in [fromServerToCustomer, fromServerToProvider, toOps] {
            var frames = iterator
            #expect(try await next(&frames) == .closed(reason: "The trip has ended."))
            #expect(try await next(&frames) == nil, "the socket closes after it")
        }
        await live.server.shutdown()
    }

    @Test func aStrangersUpgradeIsRefusedWith404() async throws {
        let live = try await makeSUT()
        for (account, role) in [("c2", Party.customer), ("p2", .provider), ("m1", .merchant)] {
            do {
                _ = try await live.socket(account, role)
                Issue.record("\(account) was let in")
            } catch let failure as WebSocketClient.Failure {
                guard case .refused(let status, let body) = failure else { Issue.record("\(failure)"); continue }
                #expect(status == 404)
                #expect(try WireCoding.decoder().decode(Problem.self, from: Data(body)).detail == "No such trip.")
            }
        }
        #expect(live.backend.backend.chat.listenerCount(live.trip) == 0)
        await live.server.shutdown()
    }
}
