import Foundation
import Synchronization
import Testing
import TestSupport
@testable import OrderTracking

/// An `ActivityController` that logs every call; `start` fails the test unless allowed.
@MainActor
final class FakeActivityController: ActivityController {
    enum Call: Equatable {
        case start(OrderID, OrderStatus), update(OrderID, OrderStatus, Date), end(OrderID, OrderStatus, Date)
    }

    var areActivitiesEnabled = true
    var allowStart = false
    var running: Set<OrderID> = []
    private(set) var calls: [Call] = []
    private(set) var contents: [LiveActivityContent] = []
    private var tokens: [OrderID: AsyncStream<Data>.Continuation] = [:]

    func runningActivities() -> Set<OrderID> { running }

    func start(_ order: OrderID, content: LiveActivityContent) throws {
        guard allowStart else { Issue.record("unexpected start(\(order))"); throw FakeError.unexpected }
        calls.append(.start(order, content.status))
        running.insert(order)
    }

    func update(_ order: OrderID, content: LiveActivityContent, timestamp: Date) async {
        calls.append(.update(order, content.status, timestamp))
        contents.append(content)
    }

    func end(_ order: OrderID, content: LiveActivityContent, timestamp: Date) async {
        calls.append(.end(order, content.status, timestamp))
        running.remove(order)
    }

    func pushTokens(for order: OrderID) -> AsyncStream<Data> {
        let (stream, continuation) = AsyncStream.makeStream(of: Data.self)
        tokens[order] = continuation
        return stream
    }

    func newToken(_ token: Data, for order: OrderID) { tokens[order]?.yield(token) }
}

/// Records uploaded tokens.
final class FakeTokens: LiveActivityTokens {
    private let sent = Mutex<[String]>([])
    var uploads: [String] { sent.withLock { $0 } }
    func send(_ token: Data, for order: OrderID) async throws {
        sent.withLock { $0.append("\(order):\(token.map { String($0) }.joined(separator: ","))") }
    }
}

@MainActor
@Suite struct OrderLiveActivityEngineTests {
    private func makeSUT(
        running: Set<OrderID> = [], phase: AppPhase = .foreground
    )
        -> (OrderLiveActivityEngine, FakeActivityController, FedSnapshots, FakeTokens)
    {
        let activities = FakeActivityController()
        activities.running = running
        let feed = FedSnapshots()
        let tokens = FakeTokens()
        let engine = OrderLiveActivityEngine(
            tracking: tokens, snapshots: feed, activities: activities,
            lifecycle: ManualAppLifecycle(phase: phase))
        return (engine, activities, feed, tokens)
    }

    private func at(_ seconds: Double) -> Date { Fixture.t0.addingTimeInterval(seconds) }

    @Test func startsWhenAnOrderBeginsInTheForegroundAndUploadsEveryNewToken() async throws {
        let (engine, activities, feed, tokens) = makeSUT()
        activities.allowStart = true
        engine.start()
        feed.feed(Fixture.snapshot(version: 1, status: .placed, generatedAt: at(0)))
        try await eventually { activities.calls == [.start("8F3K", .placed)] }

        activities.newToken(Data([1]), for: "8F3K")
        activities.newToken(Data([1]), for: "8F3K")
        activities.newToken(Data([2]), for: "8F3K")
        try await eventually { tokens.uploads.count == 2 }
        #expect(tokens.uploads == ["8F3K:1", "8F3K:2"])
        engine.stop()
    }

    @Test func updatesWithGeneratedAtAndIgnoresOlderSnapshots() async throws {
        let (engine, activities, feed, _) = makeSUT(running: ["8F3K"])
        engine.start()
        feed.feed(
            Fixture.snapshot(version: 7, status: .onTheWay, generatedAt: at(10)),
            Fixture.snapshot(version: 6, status: .picking, generatedAt: at(5)),
            Fixture.snapshot(version: 8, status: .arriving, generatedAt: at(20)))
        try await eventually { activities.calls.count == 2 }
        #expect(activities.calls == [.update("8F3K", .onTheWay, at(10)), .update("8F3K", .arriving, at(20))])
        #expect(activities.contents.first?.staleDate == at(190))
        engine.stop()
    }

    @Test func endsWithFinalContentOnDeliveredThenDoesNothing() async throws {
        let (engine, activities, feed, _) = makeSUT(running: ["8F3K"])
        engine.start()
        feed.feed(
            Fixture.snapshot(version: 8, status: .arriving, generatedAt: at(10)),
            Fixture.snapshot(version: 9, status: .delivered, generatedAt: at(20)),
            Fixture.snapshot(version: 10, status: .delivered, generatedAt: at(30)),
            Fixture.snapshot("SENTINEL", version: 1, status: .delivered, generatedAt: at(40)))
        try await eventually { activities.calls.count == 2 }
        for _ in 0..<100 { await Task.yield() }
        #expect(activities.calls == [.update("8F3K", .arriving, at(10)), .end("8F3K", .delivered, at(20))])
        engine.stop()
    }

    /// Seed flow 2: the server's push already ended the card while the app was away.
    @Test func doesNothingWhenTheActivityAlreadyEnded() async {
        let (engine, activities, feed, _) = makeSUT(running: ["8F3K"])
        engine.start()
        activities.running = []
        feed.feed(Fixture.snapshot(version: 9, status: .delivered, generatedAt: at(20)))
        for _ in 0..<200 { await Task.yield() }
        #expect(activities.calls.isEmpty)
        engine.stop()
    }

    @Test(arguments: [(true, AppPhase.background), (false, .foreground)])
    func startsNothingInTheBackgroundOrWhenDisabled(enabled: Bool, phase: AppPhase) async {
        let (engine, activities, feed, _) = makeSUT(phase: phase)
        activities.areActivitiesEnabled = enabled
        engine.start()
        feed.feed(Fixture.snapshot(version: 1, status: .placed))
        for _ in 0..<200 { await Task.yield() }
        #expect(activities.calls.isEmpty)
        engine.stop()
    }

    @Test func reattachesAtLaunchAndUploadsTheRunningActivitysToken() async throws {
        let (engine, activities, _, tokens) = makeSUT(running: ["8F3K"])
        engine.start()
        activities.newToken(Data([7]), for: "8F3K")
        try await eventually { tokens.uploads == ["8F3K:7"] }
        engine.stop()
    }
}
