import Foundation
import Testing
import EnRouteCrypto
import EnRouteModels
import EnRouteDomain
import EnRouteNotifications
import NotificationsKit
import TestSupport

/// A chat message to a party with no chat socket open goes out as a CHAT_MESSAGE push whose text only the device can
/// read.
@Suite struct ChatPushTests {
    /// A device token (hex) per account.
    static func token(_ account: String) -> String {
        String(repeating: "c4", count: 31) + (account == "p1" ? "02" : "01")
    }

    struct SUT {
        let backend: TestBackend
        let trip: String
        let gateway = FakePushGateway(defaultOutcome: .delivered)

        func register(_ account: String, _ role: Party, publicKey: [UInt8]?) async throws {
            let key = publicKey.map { #","publicKey":"\#(Data($0).base64EncodedString())""# } ?? ""
            let r = await backend.call(
                "PUT", APIPath.device(ChatPushTests.token(account)), token: backend.token(account, role),
                json: #"{"platform":"ios","environment":"production","appVersion":"4.2.0"\#(key)}"#)
            try #require(r.status == 204)
        }

        func write(_ text: String, as account: String, _ role: Party) async throws -> ChatMessage {
            let body = String(
                decoding: try JSONEncoder().encode(ChatMessageRequest(messageId: UUID().uuidString, text: text)),
                as: UTF8.self)
            let r = await backend.call(
                "POST", APIPath.tripMessages(trip), token: backend.token(account, role), json: body)
            try #require(r.status == 201)
            return try WireCoding.decoder().decode(ChatMessage.self, from: Data(r.body))
        }

        func outbox() async throws -> [PushJob] {
            try await backend.store.dueOutbox(topic: PushJob.topic, now: .distantFuture, limit: 100).map {
                try PushJob.decode($0.payload)
            }
        }

        func drain() async throws {
            let b = backend.backend, clock = backend.clock
            try await PushSender(
                store: b.store, devices: b.devices, ledger: b.ledger, gateway: gateway, clock: clock,
                now: { clock.date }
            ).drain()
        }
    }

    func makeSUT() async throws -> SUT {
        let backend = TestBackend()
        let body = try await backend.rideBody(
            "c1", pickup: #"{"lat":60.1699,"lng":24.9384}"#, dropoff: #"{"lat":60.1841,"lng":24.9497}"#)
        let r = await backend.call(
            "POST", APIPath.trips, token: backend.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": "chat-push-1"])
        try #require(r.status == 201, "\(r.status) \(String(decoding: r.body, as: UTF8.self))")
        let trip = try WireCoding.decoder().decode(Trip.self, from: Data(r.body))
        try #require(await backend.assign(trip.id, to: "p1").status == 200)
        return SUT(backend: backend, trip: trip.id)
    }

    @Test func thePushGoesOutWhenTheOtherPartyHasNoSocketAndCarriesNoTextInClear() async throws {
        let sut = try await makeSUT()
        let privateKey = X25519.generatePrivateKey()
        try await sut.register("p1", .provider, publicKey: try X25519.publicKey(for: privateKey))
        let text = "Gate code 4521, blue door"
        let message = try await sut.write(text, as: "c1", .customer)
        try await sut.drain()

        let push = try #require(sut.gateway.sent.first)
        #expect(sut.gateway.sent.count == 1)
        #expect(push.token == Self.token("p1") && push.pushType == .alert && push.priority == 10)
        #expect(push.collapseID == "chat-\(sut.trip)", "one conversation collapses to its newest message")
        let clear = String(decoding: push.payload, as: UTF8.self)
        for word in ["Gate", "4521", "blue door"] { #expect(!clear.contains(word), "'\(word)' in clear: \(clear)") }

        let payload = try #require(NotificationPayload(json: push.payload))
        #expect(payload.category == "CHAT_MESSAGE")
        #expect(payload.title == "New message")
        #expect(payload.body == "Your customer sent you a message.")
        #expect(payload.routePath == "trips/\(sut.trip)/chat")
        let id = try #require(payload.notificationID)
        #expect(id.rawValue == "chat.\(sut.trip).\(message.seq)")
        let secret = try #require(payload.secret)
        #expect(
            NotificationSecret.open(secret, notificationID: id, privateKey: privateKey) == text, "the device opens it")
        #expect(NotificationSecret.open(secret, notificationID: id, privateKey: X25519.generatePrivateKey()) == nil)
    }

    @Test func noPushWhileThePartyHasAChatSocketOpen() async throws {
        let sut = try await makeSUT()
        try await sut.register("p1", .provider, publicKey: nil)
        do {
            let socket = sut.backend.backend.chat.listen(sut.trip, role: .provider)
            _ = try await sut.write("Are you close?", as: "c1", .customer)
            #expect(try await sut.outbox().isEmpty, "the provider's socket got it live")
            withExtendedLifetime(socket) {}
        }
        // The socket is gone; an ops viewer or the customer's own socket is not the provider's.
        let others = [
            sut.backend.backend.chat.listen(sut.trip, role: nil),
            sut.backend.backend.chat.listen(sut.trip, role: .customer),
        ]
        _ = try await sut.write("Hello?", as: "c1", .customer)
        let jobs = try await sut.outbox()
        #expect(jobs.map(\.kind) == [.chatMessage])
        #expect(jobs.first?.accountId == "p1")
        withExtendedLifetime(others) {}
    }

    @Test func aDeviceWithoutAKeyGetsOnlyTheGenericAlert() async throws {
        let sut = try await makeSUT()
        try await sut.register("c1", .customer, publicKey: nil)
        _ = try await sut.write("Your coffee is here, 2 min", as: "p1", .provider)
        try await sut.drain()
        let push = try #require(sut.gateway.sent.first)
        let payload = try #require(NotificationPayload(json: push.payload))
        #expect(payload.secret == nil)
        #expect(payload.body == "Your driver or courier sent you a message.")
        #expect(!String(decoding: push.payload, as: UTF8.self).contains("coffee"))
    }
}

extension ChatPushTests {
    /// The device's service extension shows the message itself in place of the generic line.
    @Test func theServiceExtensionOpensTheMessageIntoTheBody() async throws {
        let sut = try await makeSUT()
        let keys = InMemoryKeyStore()
        try await sut.register("p1", .provider, publicKey: try await keys.makeKeyPair())
        _ = try await sut.write("Gate code 4521", as: "c1", .customer)
        try await sut.drain()
        let push = try #require(sut.gateway.sent.first)
        let payload = try #require(NotificationPayload(json: push.payload))
        let logic = NotificationServiceLogic(
            keys: keys, images: ChatNoImages(), attachments: ChatNoAttachments(), clock: sut.backend.clock)
        #expect(await logic.didReceive(payload) == EnrichedNotification(title: "New message", body: "Gate code 4521"))
    }
}

private struct ChatNoImages: ImageFetcher {
    func fetch(_ url: URL) async throws -> Data { Issue.record("a chat push has no image"); return Data() }
}

private struct ChatNoAttachments: AttachmentWriter {
    func write(_ data: Data, suggestedName: String) throws -> URL {
        Issue.record("a chat push has no attachment"); return URL(fileURLWithPath: "/")
    }
}
