import Foundation
import Synchronization
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteSandbox
import TestSupport

/// The payment worker keeps up with a busy node: settlements run side by side, those of one subject in order.
@Suite(.timeLimit(.minutes(1))) struct PaymentWorkerTests {
    /// Requests and completes a ride for `customer` with provider `p1`, leaving its settlement queued.
    static func completedRide(_ backend: TestBackend, _ customer: String) async throws -> String {
        let created = try await MoneyFlow.request(backend, customer)
        #expect(created.status == 201)
        let id = try MoneyFlow.trip(created.body).id
        #expect(await backend.assign(id, to: "p1").status == 200)
        for step in ["driverArrived", "onTrip", "completed"] {
            await backend.clock.advance(by: .seconds(60))
            #expect(await backend.step(id, step).status == 200)
        }
        return id
    }

    @Test func settlementsOfSeveralTripsWaitOnTheGatewayTogetherNotOneAfterAnother() async throws {
        let clock = ManualClock()
        let sandbox = SandboxGateway(
            baseURL: URL(string: "http://sandbox.test")!, ids: SequentialIDGenerator(prefix: "s"),
            now: { clock.date })
        // Each capture answers only once three are waiting: one job at a time would never finish.
        let gateway = CaptureBarrier(base: sandbox, together: 3)
        let backend = TestBackend(clock: clock, payments: gateway)
        var trips: [String] = []
        for customer in ["c1", "c2", "c3"] { trips.append(try await Self.completedRide(backend, customer)) }

        try await backend.settlePayments()
        #expect(gateway.mostAtOnce == 3)
        for id in trips { #expect(try backend.service.cached(id)?.payment?.state == .captured, "\(id)") }
        #expect(sandbox.openHolds().isEmpty)
    }

    @Test func theLagIsHowLongTheOldestNewJobWaitedAndFallsToZeroOnceCaughtUp() async throws {
        let clock = ManualClock()
        let sandbox = SandboxGateway(
            baseURL: URL(string: "http://sandbox.test")!, ids: SequentialIDGenerator(prefix: "s"),
            now: { clock.date })
        let gateway = CaptureBarrier(base: sandbox, together: 2)
        let backend = TestBackend(clock: clock, payments: gateway)
        let id = try await Self.completedRide(backend, "c1")
        await clock.advance(by: .seconds(30))

        let worker = backend.backend.paymentWorker
        let drain = Task { try await backend.settlePayments() }
        var arrivals = gateway.arrivals.makeAsyncIterator()
        _ = await arrivals.next()
        #expect(worker.lag == 30, "the settlement queued at completion waited 30 s")
        #expect(backend.backend.metrics.render().contains("enroute_payment_lag_seconds 30"))
        gateway.open()
        try await drain.value
        #expect(worker.lag == 0)
        #expect(try backend.service.cached(id)?.payment?.state == .captured)
    }

    @Test func anUnreadableJobLeavesTheOutboxAndTheOthersStillRun() async throws {
        let backend = TestBackend()
        let id = try await Self.completedRide(backend, "c1")
        try await backend.store.transaction { tx in
            try await tx.enqueue(
                OutboxMessage(
                    id: "garbage", topic: PaymentJob.topic, payload: Array("{".utf8), createdAt: backend.clock.date))
        }
        #expect(try await backend.backend.paymentWorker.drain() == 2, "the settlement, and the unreadable job dropped")
        #expect(try await backend.store.dueOutbox(topic: PaymentJob.topic, now: backend.clock.date, limit: 10).isEmpty)
        #expect(try backend.service.cached(id)?.payment?.state == .captured)
    }

    @Test func jobsOfOneSubjectShareItsLaneAndOthersHaveTheirOwn() {
        let intent = GatewayIntent(id: "pi_1", status: .succeeded, amountMinor: 100, currency: "eur")
        let event = PaymentJob.event(
            GatewayEvent(
                id: "evt_1", type: "payment_intent.succeeded", intent: intent,
                created: Date(timeIntervalSince1970: 0)))
        #expect(PaymentJob.settle("T1").subject == PaymentJob.tip("T1").subject)
        #expect(PaymentJob.settle("T1").subject != PaymentJob.settle("T2").subject)
        #expect(event.subject == "intent:pi_1" && event.subject != PaymentJob.settle("pi_1").subject)
    }
}

/// A gateway whose captures wait until `together` of them are waiting at once, then all answer; records the most
/// captures that were under way at once. Everything else goes straight to `base`.
final class CaptureBarrier: PaymentGateway {
    let base: SandboxGateway
    let together: Int
    private struct State { var waiting: [CheckedContinuation<Void, Never>] = []; var open = false; var most = 0 }
    private let state = Mutex(State())
    init(base: SandboxGateway, together: Int) {
        self.base = base; self.together = together
        (arrivals, arrived) = AsyncStream.makeStream()
    }

    /// The most captures that waited at once.
    var mostAtOnce: Int { state.withLock { $0.most } }
    /// One element each time a capture starts waiting.
    let arrivals: AsyncStream<Void>
    private let arrived: AsyncStream<Void>.Continuation

    /// Lets every waiting capture, and every later one, through.
    func open() {
        let waiting = state.withLock { s in
            s.open = true
            defer { s.waiting = [] }
            return s.waiting
        }
        for waiter in waiting { waiter.resume() }
    }

    var name: String { base.name }
    func describe(token: String) async throws(PaymentGatewayError) -> CardDetails {
        try await base.describe(token: token)
    }
    func authorize(_ request: AuthorizationRequest) async throws(PaymentGatewayError) -> GatewayIntent {
        try await base.authorize(request)
    }
    func retrieve(intentId: String) async throws(PaymentGatewayError) -> GatewayIntent {
        try await base.retrieve(intentId: intentId)
    }
    func capture(
        intentId: String, amountMinor: Int, idempotencyKey: String
    ) async throws(PaymentGatewayError)
        -> GatewayIntent
    {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                guard !s.open else { return [continuation] }
                s.waiting.append(continuation)
                s.most = max(s.most, s.waiting.count)
                guard s.waiting.count >= together else { return [] }
                s.open = true
                defer { s.waiting = [] }
                return s.waiting
            }
            arrived.yield()
            for waiter in ready { waiter.resume() }
        }
        return try await base.capture(intentId: intentId, amountMinor: amountMinor, idempotencyKey: idempotencyKey)
    }
    func cancel(intentId: String, idempotencyKey: String) async throws(PaymentGatewayError) -> GatewayIntent {
        try await base.cancel(intentId: intentId, idempotencyKey: idempotencyKey)
    }
    func charge(_ request: AuthorizationRequest) async throws(PaymentGatewayError) -> GatewayIntent {
        try await base.charge(request)
    }
}
