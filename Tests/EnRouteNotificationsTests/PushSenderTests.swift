import Foundation
import Testing
import EnRouteCrypto
import EnRouteNotifications
import EnRouteAPNs
import EnRouteDomain
import EnRouteAPI
import EnRouteSQLite
import HTTPEngine
import TestSupport
import Synchronization

@Suite struct PushSenderTests {
    static let tokenA = String(repeating: "aa", count: 32)
    static let tokenB = String(repeating: "bb", count: 32)

    struct SUT {
        let clock: ManualClock
        let store: any TripStore
        let devices: InMemoryDeviceRepository
        let ledger: InMemoryNotificationLedger
        let gateway: FakePushGateway
        let sender: PushSender
        let metrics: MetricsRegistry
    }

    static func makeSUT(
        store: any TripStore = InMemoryTripStore(), gateway: FakePushGateway, clock: ManualClock = ManualClock(),
        devices: InMemoryDeviceRepository = InMemoryDeviceRepository()
    ) -> SUT {
        let ledger = InMemoryNotificationLedger()
        let metrics = MetricsRegistry()
        let sender = PushSender(
            store: store, devices: devices, ledger: ledger, gateway: gateway, clock: clock, now: { clock.date },
            metrics: metrics)
        return SUT(
            clock: clock, store: store, devices: devices, ledger: ledger, gateway: gateway, sender: sender,
            metrics: metrics)
    }

    static func register(
        _ sut: SUT, _ token: String, account: String = "c1", environment: APNsEnvironment = .production,
        at: Date? = nil
    ) async throws {
        try await sut.devices.register(
            DeviceRecord(
                token: token, accountId: account, platform: "ios", environment: environment,
                appVersion: "4.2.0", publicKey: try X25519.publicKey(for: X25519.generatePrivateKey()),
                registeredAt: at ?? sut.clock.date))
    }

    static func enqueue(_ sut: SUT, order: String = "O1", version: Int = 2, stage: OrderStage = .onTheWay) async throws
    {
        var job = PushJob(
            kind: .orderUpdate, orderId: order, accountId: "c1", orderVersion: version,
            expiresAt: sut.clock.date.addingTimeInterval(3600))
        job.stage = stage
        job.notificationId = "\(order).\(version)"
        job.riderFirstName = "Ana"
        let message = OutboxMessage(
            id: "apns.alert.\(order).\(version)", topic: PushJob.topic, payload: try job.encoded(),
            createdAt: sut.clock.date)
        try await sut.store.transaction { tx in try await tx.enqueue(message) }
    }

    static func pending(_ sut: SUT) async throws -> [OutboxMessage] {
        try await sut.store.dueOutbox(topic: PushJob.topic, now: .distantFuture, limit: 100)
    }

    static func enqueueActivity(_ sut: SUT, version: Int, event: String = "update") async throws {
        var job = PushJob(
            kind: .liveActivity, orderId: "O1", accountId: "c1", orderVersion: version,
            expiresAt: sut.clock.date.addingTimeInterval(180))
        job.liveActivityToken = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
        job.event = event
        job.priority = 10
        job.timestamp = Int(sut.clock.date.timeIntervalSince1970)
        job.status = event == "end" ? "delivered" : "arriving"
        let message = OutboxMessage(
            id: "apns.la.O1.\(version)", topic: PushJob.topic, payload: try job.encoded(), createdAt: sut.clock.date)
        try await sut.store.transaction { tx in try await tx.enqueue(message) }
    }

    /// An update whose first attempt failed is not sent once a newer one for the same activity got through:
    /// Live Activity timestamps only rise.
    @Test func aRetriedLiveActivityUpdateOlderThanOneDeliveredIsDroppedUnsent() async throws {
        let sut = Self.makeSUT(
            gateway: FakePushGateway(
                script: [.retry(.network, reason: "connection refused")], defaultOutcome: .delivered))
        try await Self.register(sut, Self.tokenA)
        try await Self.enqueueActivity(sut, version: 3)
        try await sut.sender.drain()  // fails; retried in 5 s
        await sut.clock.advance(by: .seconds(2))
        try await Self.enqueueActivity(sut, version: 4, event: "end")
        try await sut.sender.drain()  // the end goes through
        await sut.clock.advance(by: .seconds(5))
        try await sut.sender.drain()  // the older update is due again
        let stamps = sut.gateway.sent.compactMap { push in
            ((try? JSONSerialization.jsonObject(with: Data(push.payload))) as? [String: Any]).flatMap {
                ($0["aps"] as? [String: Any])?["timestamp"] as? Int
            }
        }
        #expect(stamps.count == 2 && stamps == stamps.sorted(), "\(stamps)")
        #expect(try await Self.pending(sut).isEmpty)
        #expect(sut.metrics.counter("enroute_push_outbox_done_total", labels: ["result": "superseded"]) == 1)
    }

    @Test func sendsToEveryDeviceOfTheAccountResolvedAtSendTime() async throws {
        let sut = Self.makeSUT(gateway: FakePushGateway(defaultOutcome: .delivered))
        try await Self.enqueue(sut)
        try await Self.register(sut, Self.tokenA)  // registered after the change, before the send
        try await Self.register(sut, Self.tokenB, environment: .sandbox)
        try await sut.sender.drain()
        let sent = sut.gateway.sent
        #expect(Set(sent.map(\.token)) == [Self.tokenA, Self.tokenB])
        #expect(sent.first { $0.token == Self.tokenB }?.environment == .sandbox)
        #expect(sent.allSatisfy { $0.collapseID == "order-O1-onTheWay" && $0.pushType == .alert && $0.priority == 10 })
        #expect(try await Self.pending(sut).isEmpty)
    }

    @Test func serverErrorsAreRetriedWithBackoffOnlyForTheDevicesThatFailed() async throws {
        let sut = Self.makeSUT(
            gateway: FakePushGateway(
                script: [.delivered, .retry(.serverError, reason: "InternalServerError")],
                defaultOutcome: .delivered))
        try await Self.register(sut, Self.tokenA, at: sut.clock.date.addingTimeInterval(1))
        try await Self.register(sut, Self.tokenB)
        try await Self.enqueue(sut)
        try await sut.sender.drain()
        #expect(sut.gateway.sent.count == 2)
        let waiting = try #require(try await Self.pending(sut).first)
        #expect(waiting.attempts == 1)
        #expect(waiting.notBefore == sut.clock.date.addingTimeInterval(60))
        try await sut.sender.drain()
        #expect(sut.gateway.sent.count == 2, "not due yet")
        await sut.clock.advance(by: .seconds(60))
        try await sut.sender.drain()
        #expect(sut.gateway.sent.map(\.token) == [Self.tokenA, Self.tokenB, Self.tokenB])
        #expect(try await Self.pending(sut).isEmpty)
    }

    @Test func throttlingBacksOffAndDoublesEachTime() async throws {
        let sut = Self.makeSUT(
            gateway: FakePushGateway(
                script: [.retry(.throttled, reason: "TooManyRequests"), .retry(.throttled, reason: "TooManyRequests")],
                defaultOutcome: .delivered))
        try await Self.register(sut, Self.tokenA)
        try await Self.enqueue(sut)
        try await sut.sender.drain()
        #expect(try await Self.pending(sut).first?.notBefore == sut.clock.date.addingTimeInterval(30))
        await sut.clock.advance(by: .seconds(30))
        try await sut.sender.drain()
        #expect(try await Self.pending(sut).first?.notBefore == sut.clock.date.addingTimeInterval(60))
        await sut.clock.advance(by: .seconds(60))
        try await sut.sender.drain()
        #expect(try await Self.pending(sut).isEmpty)
        #expect(sut.gateway.sent.count == 3)
    }

    @Test func aDeadTokenIsDeletedUnlessRegisteredAgainAfterTheTimestamp() async throws {
        let start = ManualClock().date
        let sut = Self.makeSUT(
            gateway: FakePushGateway(script: [
                .tokenInvalid(since: start.addingTimeInterval(-10).timeIntervalSince1970),
                .tokenInvalid(since: start.addingTimeInterval(-10).timeIntervalSince1970),
            ]))
        try await Self.register(sut, Self.tokenA, at: start.addingTimeInterval(-60))  // before APNs' timestamp: dead
        try await Self.register(sut, Self.tokenB, at: start)  // re-registered since: kept
        try await Self.enqueue(sut)
        try await sut.sender.drain()
        #expect(try await sut.devices.device(token: Self.tokenA) == nil)
        #expect(try await sut.devices.device(token: Self.tokenB) != nil)
        #expect(try await Self.pending(sut).isEmpty, "410 is not retried")
    }

    @Test func expiredMessagesAreDroppedUnsent() async throws {
        let sut = Self.makeSUT(gateway: FakePushGateway())
        try await Self.register(sut, Self.tokenA)
        try await Self.enqueue(sut)
        await sut.clock.advance(by: .seconds(3601))
        try await sut.sender.drain()
        #expect(sut.gateway.sent.isEmpty)
        #expect(try await Self.pending(sut).isEmpty)
        #expect(sut.metrics.counter("enroute_push_outbox_done_total", labels: ["result": "expired"]) == 1)
    }

    @Test func aSentOrderUpdateIsRecordedSoItsOpenCanBeCounted() async throws {
        let sut = Self.makeSUT(gateway: FakePushGateway(defaultOutcome: .delivered))
        try await Self.register(sut, Self.tokenA)
        try await Self.enqueue(sut)
        try await sut.sender.drain()
        let open = try await sut.ledger.recordOpen(id: "O1.2", accountId: "c1", action: "open", at: sut.clock.date)
        #expect(
            open
                == .firstOpen(
                    SentNotification(
                        id: "O1.2", accountId: "c1", campaign: "orderUpdates", stage: "onTheWay", sentAt: sut.clock.date
                    )))
    }

    @Test func theRunLoopPollsOnTheInjectedClock() async throws {
        let sut = Self.makeSUT(gateway: FakePushGateway(defaultOutcome: .delivered))
        try await Self.register(sut, Self.tokenA)
        let loop = Task { await sut.sender.run() }
        await sut.clock.sleepers(atLeast: 1)
        try await Self.enqueue(sut)
        await sut.clock.advance(by: .seconds(1))
        await sut.clock.sleepers(atLeast: 1)
        #expect(sut.gateway.sent.count == 1)
        loop.cancel()
        await loop.value
    }

    /// Several nodes drain one outbox: each message is claimed by one sender, so none is sent twice.
    @Test func twoSendersOnOneOutboxSendEachMessageOnce() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("push-\(UUID().uuidString).sqlite")
            .path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let clock = ManualClock()
        let devices = InMemoryDeviceRepository()
        let a = Self.makeSUT(
            store: try TestStorage.tripStore(path: path), gateway: FakePushGateway(defaultOutcome: .delivered),
            clock: clock, devices: devices)
        let b = Self.makeSUT(
            store: try TestStorage.tripStore(path: path), gateway: FakePushGateway(defaultOutcome: .delivered),
            clock: clock, devices: devices)
        try await Self.register(a, Self.tokenA)
        for version in 2...41 { try await Self.enqueue(a, version: version) }
        async let drainedA = a.sender.drain()
        async let drainedB = b.sender.drain()
        _ = try await (drainedA, drainedB)
        let sent = (a.gateway.sent + b.gateway.sent).compactMap { PushJobProbe.notificationID($0.payload) }
        #expect(sent.count == 40, "sent \(sent.count) for 40 messages")
        #expect(Set(sent) == Set((2...41).map { "O1.\($0)" }))
        #expect(try await Self.pending(a).isEmpty)
    }

    /// Delivery is at least once: a sender killed mid-drain leaves the rest of its claimed batch (and the one in
    /// flight)
    /// to the next sender, once the claim runs out.
    @Test func aSenderKilledMidDrainLosesNothingAfterRestart() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("push-\(UUID().uuidString).sqlite")
            .path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let clock = ManualClock()
        let devices = InMemoryDeviceRepository()
        let sends = Counter()
        // The second send hangs (on the manual clock) until the process "dies".
        let dying = Self.makeSUT(
            store: try TestStorage.tripStore(path: path),
            gateway: FakePushGateway(
                defaultOutcome: .delivered,
                onSend: { _ in
                    if sends.next() == 2 { try? await clock.sleep(for: .seconds(86_400)) }
                }),
            clock: clock, devices: devices)
        try await Self.register(dying, Self.tokenA)
        for version in 2...6 { try await Self.enqueue(dying, version: version) }
        let run = Task { try await dying.sender.drain() }
        await clock.sleepers(atLeast: 1)
        run.cancel()
        _ = await run.result
        #expect(try await Self.pending(dying).count == 4, "the one in flight stays in the outbox")

        // Restart: a new store on the same file and a new sender.
        let restarted = Self.makeSUT(
            store: try TestStorage.tripStore(path: path), gateway: FakePushGateway(defaultOutcome: .delivered),
            clock: clock, devices: devices)
        // Still claimed by the dead sender: nobody sends them twice while it might yet.
        try await restarted.sender.drain()
        #expect(restarted.gateway.sent.isEmpty)
        await clock.advance(by: .seconds(PushSender.claimSeconds))
        try await restarted.sender.drain()
        let delivered = (dying.gateway.sent + restarted.gateway.sent).compactMap {
            PushJobProbe.notificationID($0.payload)
        }
        #expect(Set(delivered) == Set((2...6).map { "O1.\($0)" }))
        #expect(restarted.gateway.sent.count == 4)
        #expect(try await Self.pending(restarted).isEmpty)
    }
}

/// A thread-safe counter for fakes.
final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int {
        value.withLock {
            $0 += 1; return $0
        }
    }
}

enum PushJobProbe {
    static func notificationID(_ payload: [UInt8]) -> String? {
        ((try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any])?["notificationId"] as? String
    }
}
