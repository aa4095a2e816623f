import Foundation
import Testing
import EnRouteDomain
import EnRouteModels
import EnRouteBackend
import HTTPEngine
import TestSupport

/// The chat's REST pair and the WebSocket's door, through the router in-process, on a manual clock.
@Suite struct ChatAPITests {
    static let upgrade = [
        "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version": "13",
    ]

    /// A ride by c1 that ops handed to p1.
    func makeSUT() async throws -> (backend: TestBackend, trip: String) {
        let backend = TestBackend()
        let trip = try await backend.requestRide("c1")
        try #require(await backend.assign(trip.id, to: "p1").status == 200)
        return (backend, trip.id)
    }

    func post(
        _ backend: TestBackend, _ trip: String, as account: String, _ role: Party, id: String = UUID().uuidString,
        text: String = "I'm at the door"
    ) async -> (status: Int, headers: HTTPHeaders, body: [UInt8]) {
        let body = String(
            decoding: try! JSONEncoder().encode(ChatMessageRequest(messageId: id, text: text)), as: UTF8.self)
        return await backend.call("POST", APIPath.tripMessages(trip), token: backend.token(account, role), json: body)
    }

    func history(
        _ backend: TestBackend, _ trip: String, as account: String = "c1", _ role: Party = .customer,
        after: Int64? = nil
    ) async throws -> ChatHistory {
        let r = await backend.call("GET", APIPath.tripMessages(trip, after: after), token: backend.token(account, role))
        try #require(r.status == 200, "\(r.status) \(String(decoding: r.body, as: UTF8.self))")
        return try WireCoding.decoder().decode(ChatHistory.self, from: Data(r.body))
    }

    func complete(_ backend: TestBackend, _ trip: String) async throws {
        for step in ["driverArrived", "onTrip", "completed"] {
            try #require(await backend.step(trip, step).status == 200)
        }
    }

    @Test(arguments: [("c2", Party.customer), ("p2", .provider), ("m1", .merchant)])
    func anyoneButThePartiesGets404OnEveryPathWebSocketIncluded(account: String, role: Party) async throws {
        let (backend, trip) = try await makeSUT()
        #expect(await post(backend, trip, as: "c1", .customer).status == 201)
        let token = backend.token(account, role)
        let answers = [
            await post(backend, trip, as: account, role),
            await backend.call("GET", APIPath.tripMessages(trip), token: token),
            await backend.call("GET", APIPath.tripChat(trip), token: token, headers: Self.upgrade),
        ]
        for answer in answers {
            #expect(answer.status == 404)
            #expect(answer.headers["Content-Type"] == "application/problem+json")
            #expect(!String(decoding: answer.body, as: UTF8.self).contains("door"))
        }
        #expect(try await history(backend, trip).messages.count == 1, "nothing was written by the stranger")
    }

    @Test func opsReadButDoNotWrite() async throws {
        let (backend, trip) = try await makeSUT()
        #expect(await post(backend, trip, as: "p1", .provider).status == 201)
        #expect(try await history(backend, trip, as: "ops", .ops).messages.map(\.from) == [.provider])
        let refused = await post(backend, trip, as: "ops", .ops)
        #expect(refused.status == 403)
        #expect(
            await backend.call("GET", APIPath.tripChat(trip), token: backend.token("ops", .ops), headers: Self.upgrade)
                .status == 101)
    }

    @Test func aResentMessageIdIsStoredOnce() async throws {
        let (backend, trip) = try await makeSUT()
        let first = await post(backend, trip, as: "c1", .customer, id: "m-1", text: "Blue door")
        let again = await post(backend, trip, as: "c1", .customer, id: "m-1", text: "Blue door")
        #expect(first.status == 201)
        #expect(again.status == 200)
        #expect(first.body == again.body, "the resend answers the stored message")
        #expect(await post(backend, trip, as: "p1", .provider, id: "m-2", text: "Coming").status == 201)
        let messages = try await history(backend, trip).messages
        #expect(messages.map(\.messageId) == ["m-1", "m-2"])
        #expect(messages.map(\.seq) == [1, 2])
        // The same id for another text is a mistake the client must hear of, not a silent no-op.
        let reused = await post(backend, trip, as: "c1", .customer, id: "m-1", text: "Red door")
        #expect(reused.status == 422)
        #expect(
            json(reused.body)["detail"] as? String
                == "/messageId: was used already for a different text; make a new id for a new message")
    }

    @Test func historyIsOrderedBySequenceAfterTheGivenOne() async throws {
        let (backend, trip) = try await makeSUT()
        for i in 1...4 {
            _ = await post(
                backend, trip, as: i.isMultiple(of: 2) ? "p1" : "c1", i.isMultiple(of: 2) ? .provider : .customer,
                text: "m\(i)")
        }
        #expect(try await history(backend, trip).messages.map(\.text) == ["m1", "m2", "m3", "m4"])
        #expect(try await history(backend, trip, after: 2).messages.map(\.seq) == [3, 4])
        #expect(
            await backend.call("GET", APIPath.tripMessages(trip) + "?after=-1", token: backend.token("c1", .customer))
                .status == 422)
    }

    @Test func messagesAfterTheCloseAreRefusedWithTheReason() async throws {
        let (backend, trip) = try await makeSUT()
        #expect(await post(backend, trip, as: "c1", .customer, id: "before").status == 201)
        try await complete(backend, trip)
        let refused = await post(backend, trip, as: "p1", .provider)
        #expect(refused.status == 409)
        #expect(json(refused.body)["detail"] as? String == "The trip has ended.")
        #expect(refused.headers["Content-Type"] == "application/problem+json")
        let closed = try await history(backend, trip)
        #expect(closed.closed && closed.reason == "The trip has ended.")
        #expect(closed.messages.map(\.messageId) == ["before"], "still readable until removed")
        #expect(closed.removesAt == backend.clock.date.addingTimeInterval(24 * 3600))
        // The outbox's resend of a message stored before the close still gets its stored answer.
        #expect(await post(backend, trip, as: "c1", .customer, id: "before").status == 200)
    }

    @Test func beforeAProviderHoldsTheTripThereIsNobodyToWriteTo() async throws {
        let backend = TestBackend()
        let trip = try await backend.requestRide("c1")
        let refused = await post(backend, trip.id, as: "c1", .customer)
        #expect(refused.status == 409)
        #expect(json(refused.body)["detail"] as? String == "No provider holds the trip yet.")
    }

    @Test func blockedMessagesAreClearProblems() async throws {
        let (backend, trip) = try await makeSUT()
        let long = await post(backend, trip, as: "c1", .customer, text: String(repeating: "ä", count: 1001))
        #expect(long.status == 413)
        #expect(json(long.body)["detail"] as? String == "A message is at most 2000 bytes of UTF-8.")
        #expect(await post(backend, trip, as: "c1", .customer, text: "  ").status == 422)
        var bad = Array(#"{"messageId":"x1","text":"caf"#.utf8)
        bad += [0xC3, 0x28] + Array(#""}"#.utf8)
        let r = await backend.router.respond(
            to: HTTPRequest(
                method: "POST", path: APIPath.tripMessages(trip),
                headers: HTTPHeaders([
                    ("Authorization", "Bearer \(backend.token("c1", .customer))"), ("Content-Type", "application/json"),
                ]), body: bad))
        #expect(r.status == 422)
        #expect(String(decoding: r.bodyBytes, as: UTF8.self).contains("not valid UTF-8"))
        #expect(try await history(backend, trip).messages.isEmpty, "nothing blocked was stored")
    }

    @Test func aPartySendingTooFastIsToldWhenToTryAgain() async throws {
        let (backend, trip) = try await makeSUT()
        for _ in 0..<10 { #expect(await post(backend, trip, as: "c1", .customer).status == 201) }
        let limited = await post(backend, trip, as: "c1", .customer, id: "eleventh")
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"] == "3")
        #expect(await post(backend, trip, as: "p1", .provider).status == 201, "the other party has a bucket of its own")
        await backend.clock.advance(by: .seconds(3))
        #expect(await post(backend, trip, as: "c1", .customer, id: "eleventh").status == 201)
    }

    @Test func theConversationIsRemovedTheStatedTimeAfterTheEnd() async throws {
        let (backend, trip) = try await makeSUT()
        let chat = backend.backend.chat
        _ = await post(backend, trip, as: "c1", .customer)
        try await complete(backend, trip)
        let removesAt = try #require(try await history(backend, trip).removesAt)
        #expect(try await chat.sweep() == 0)
        await backend.clock.advance(by: .seconds(24 * 3600 - 1))
        #expect(try await chat.sweep() == 0)
        #expect(try await history(backend, trip).messages.count == 1)
        await backend.clock.advance(by: .seconds(2))
        #expect(backend.clock.date > removesAt)
        #expect(try await chat.sweep() == 1)
        let gone = try await history(backend, trip)
        #expect(gone.messages.isEmpty && gone.closed)
        #expect(gone.reason == "The trip has ended. The conversation was removed.")
        #expect(try await history(backend, trip, as: "ops", .ops).messages.isEmpty)
    }

    @Test func theChatPathIsAWebSocketOnly() async throws {
        let (backend, trip) = try await makeSUT()
        let plain = await backend.call("GET", APIPath.tripChat(trip), token: backend.token("c1", .customer))
        #expect(plain.status == 426)
        #expect(plain.headers["Upgrade"] == "websocket")
        #expect(await backend.call("GET", APIPath.tripChat(trip), token: nil, headers: Self.upgrade).status == 401)
    }
}

extension ChatAPITests {
    /// On SQLite the conversation, its close and its removal survive a restart of the backend.
    @Test func onSQLiteTheConversationOutlivesARestartAndIsRemovedAfterIt() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-chat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("enroute.sqlite").path
        let clock = ManualClock()
        let trip: String
        do {
            let first = TestBackend(clock: clock, storage: .sqlite(path: path))
            trip = try await first.requestRide("c1").id
            try #require(await first.assign(trip, to: "p1").status == 200)
            #expect(await post(first, trip, as: "c1", .customer, id: "m-1", text: "Blue door").status == 201)
            try await complete(first, trip)
            #expect(try await first.backend.chat.sweep() == 0, "the end is recorded, nothing is due")
        }
        let second = TestBackend(clock: clock, storage: .sqlite(path: path))
        try await second.service.warm()
        let kept = try await history(second, trip)
        #expect(kept.messages.map(\.text) == ["Blue door"] && kept.closed)
        #expect(
            await post(second, trip, as: "c1", .customer, id: "m-1", text: "Blue door").status == 200,
            "a resend after the restart")
        await clock.advance(by: .seconds(24 * 3600 + 1))
        #expect(try await second.backend.chat.sweep() == 1)
        #expect(try await history(second, trip).messages.isEmpty)
    }
}
