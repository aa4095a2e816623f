import Foundation
import Testing
import ClientKit
import TestSupport
@testable import OrderTracking

@MainActor
@Suite struct OrderTrackingStoreTests {
    private func makeSUT() -> OrderTrackingStore {
        OrderTrackingStore(tracking: UnusedRepository())
    }

    /// Seed flow 1: a slow version-6 reply lands after version 7 and is dropped.
    @Test func aSlowOlderReplyNeverMovesTheStatusBack() async throws {
        let http = FakeHTTPClient()
        let slow = Gate()
        let trackingCalls = Counter()
        http.answer { request in
            let path = request.url.path
            if path.hasSuffix("/8F3K/tracking") {
                let first = trackingCalls.next() == 1
                if first { await slow.wait() }
                return FlowServer.tracking(version: first ? 6 : 7, status: first ? "picking" : "onTheWay")
            }
            return FlowServer.tracking(order: "SENTINEL", version: 1, status: "placed")
        }
        let repository = RemoteOrderTrackingRepository(http: http, server: FlowServer.server, clock: ManualClock())
        let store = OrderTrackingStore(tracking: repository)
        let following = Task { await store.start() }
        defer { following.cancel() }
        try await eventually("store follows") { store.state(of: "8F3K") == .loading }

        let pollReply = Task { try await repository.refresh("8F3K") }
        try await eventually("the poll is in flight") { slow.waiting == 1 }
        try await repository.refresh("8F3K")
        try await eventually("version 7 shown") { store.state(of: "8F3K").version == 7 }

        slow.open()
        #expect(try await pollReply.value.version == 6)
        try await repository.refresh("SENTINEL")
        try await eventually("everything before the sentinel applied") { store.state(of: "SENTINEL").version == 1 }
        #expect(store.state(of: "8F3K").version == 7)
        #expect(store.state(of: "8F3K").status == .onTheWay)
    }

    @Test func anythingAfterDeliveredIsDropped() {
        let store = makeSUT()
        store.apply(Fixture.snapshot(version: 9, status: .delivered))
        #expect(!store.apply(Fixture.snapshot(version: 10, status: .onTheWay)))
        #expect(!store.apply(Fixture.snapshot(version: 8, status: .arriving)))
        #expect(store.state(of: "8F3K").status == .delivered)
        #expect(store.activeOrders.isEmpty)
    }

    @Test func aStatusBumpNeverBringsAnOlderFixBack() {
        let store = makeSUT()
        store.apply(Fixture.snapshot(version: 7, status: .onTheWay, fixAt: Fixture.t0))
        store.apply(Fixture.snapshot(version: 8, status: .arriving, fixAt: Fixture.t0.addingTimeInterval(-30)))
        guard case .loaded(let shown) = store.state(of: "8F3K") else { Issue.record("not loaded"); return }
        #expect(shown.version == 8)
        #expect(shown.status == .arriving)
        #expect(shown.rider?.recordedAt == Fixture.t0)
    }

    @Test func unavailableUntilStartedThenLoadingThenLoaded() async throws {
        let feed = FedSnapshots()
        let store = OrderTrackingStore(tracking: feed)
        #expect(store.state(of: "8F3K") == .unavailable)
        let following = Task { await store.start() }
        try await eventually { store.state(of: "8F3K") == .loading }
        feed.feed(Fixture.snapshot(version: 3))
        try await eventually { store.state(of: "8F3K") == .loaded(Fixture.snapshot(version: 3)) }
        following.cancel()
        await following.value
        #expect(store.state(of: "OTHER") == .unavailable)
    }

    @Test func keepsTheLastStageThroughAProblem() {
        let store = makeSUT()
        store.apply(Fixture.snapshot(version: 4, status: .onTheWay))
        store.apply(Fixture.snapshot(version: 5, status: .problem(message: "Rider delayed")))
        #expect(store.lastStep(of: "8F3K") == .onTheWay)
    }

    /// Random permutations and duplicates of a snapshot sequence: never an older version, an older fix,
    /// or a reopened order.
    @Test(arguments: [1 as UInt64, 2, 3, 4])
    func neverShowsOlderDataWhateverTheArrivalOrder(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        for _ in 0..<250 {
            let sequence = Self.randomHistory(using: &random)
            var arrivals =
                sequence
                + (0..<Int.random(in: 0...8, using: &random)).map { _ in sequence.randomElement(using: &random)! }
            arrivals.shuffle(using: &random)

            let store = makeSUT()
            var shownVersion = 0
            var shownFix: Date?
            var finished: OrderTracking?
            for snapshot in arrivals {
                store.apply(snapshot)
                guard case .loaded(let shown) = store.state(of: "8F3K") else { Issue.record("not loaded"); return }
                #expect(shown.version >= shownVersion)
                if let before = shownFix { #expect(shown.rider.map { $0.recordedAt >= before } == true) }
                if let finished { #expect(shown == finished) }
                if shown.status.isTerminal { finished = shown }
                shownVersion = shown.version
                shownFix = shown.rider?.recordedAt ?? shownFix
            }
            if !sequence.contains(where: { $0.status.isTerminal }) {
                #expect(shownVersion == sequence.map(\.version).max())
            }
        }
    }

    /// Versions 1…n; the rider appears partway; fixes jitter, so a newer version can carry an older fix;
    /// sometimes a terminal status with nonsense after it.
    private static func randomHistory(using random: inout SeededRandom) -> [OrderTracking] {
        let count = Int.random(in: 2...12, using: &random)
        let riderFrom = Int.random(in: 1...count, using: &random)
        let stages: [OrderStatus] = [
            .placed, .picking, .onTheWay, .arriving, .problem(message: "Rider delayed"),
            .delivered, .cancelled(reason: "Items missing"),
        ]
        return (1...count).map { version in
            let status = random.next() % 4 == 0 ? stages.randomElement(using: &random)! : stages[min(version / 3, 3)]
            let fix =
                version >= riderFrom
                ? Fixture.t0.addingTimeInterval(Double(version * 5 + Int.random(in: -12...12, using: &random))) : nil
            return Fixture.snapshot(version: version, status: status, fixAt: fix)
        }
    }
}

extension TrackingState {
    var version: Int? { if case .loaded(let s) = self { s.version } else { nil } }
    var status: OrderStatus? { if case .loaded(let s) = self { s.status } else { nil } }
}
