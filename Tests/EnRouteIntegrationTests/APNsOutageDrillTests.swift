import Foundation
import Testing
import EnRouteNotifications
import EnRouteAPNs
import EnRouteDomain
import EnRouteAPI
import NotificationsKit
import TestSupport

/// The APNs stand-in goes down for ten minutes of test-clock time while a delivery advances, then comes back.
/// The sender drains every 15 s of that clock, as its run loop would. Afterwards every push has been delivered
/// exactly once, each stage under its own collapse id, none after its expiry, and Live Activity timestamps rose.
@Suite struct APNsOutageDrillTests {
    static let step: Duration = .seconds(15)

    /// One request the stand-in answered 200, with the test-clock time of the drain that sent it.
    struct Delivery {
        let request: [String: Any]
        let at: Date
        var headers: [String: String] { request["headers"] as? [String: String] ?? [:] }
        var aps: [String: Any] { (request["payload"] as? [String: Any])?["aps"] as? [String: Any] ?? [:] }
        var isLiveActivity: Bool { headers["apns-push-type"] == "liveactivity" }
    }

    final class Drill {
        var sut: PushEndToEndTests.SUT
        var elapsed: Duration = .zero
        var deliveries: [Delivery] = []
        var seen = 0

        init(_ sut: PushEndToEndTests.SUT) { self.sut = sut }

        /// Lets `duration` pass on the clock, draining after each step, and notes what got through.
        func run(for duration: Duration) async throws {
            let end = elapsed + duration
            while elapsed < end {
                await sut.flow.clock.advance(by: APNsOutageDrillTests.step)
                elapsed += APNsOutageDrillTests.step
                try await sut.sender.drain()
                let received = try await sut.standIn.received()
                for request in received.dropFirst(seen)
                where (request["answer"] as? [String: Any])?["status"] as? Int == 200 {
                    deliveries.append(Delivery(request: request, at: sut.flow.clock.date))
                }
                seen = received.count
            }
        }
    }

    @Test(arguments: APNsStandIn.Outage.allCases)
    func aTenMinuteOutageDeliversEveryPushOnceAfterwardsAndNoneExpired(outage: APNsStandIn.Outage) async throws {
        let drill = Drill(try await PushEndToEndTests.makeSUT())
        try await PushEndToEndTests.signIn(drill.sut)
        try await drill.sut.flow.place()
        try await drill.sut.flow.liveActivityToken(PushEndToEndTests.activityToken)
        try await drill.run(for: .seconds(30))
        let before = drill.deliveries.count

        try await drill.sut.standIn.goDown(outage)
        let downAt = drill.sut.flow.clock.date
        try await drill.run(for: .seconds(30))
        try await drill.sut.flow.accept()  // picking: its Live Activity update expires in the outage
        try await drill.run(for: .seconds(180))
        try await drill.sut.flow.riderAndReady()
        try await drill.run(for: .seconds(120))
        try await drill.sut.flow.riderStep("onTheWay")
        try await drill.run(for: .seconds(180))
        try await drill.sut.flow.riderStep("arriving")  // its update is still fresh when APNs is back
        try await drill.run(for: .seconds(90))
        #expect(drill.sut.flow.clock.date.timeIntervalSince(downAt) == 600)
        #expect(drill.deliveries.count == before, "nothing gets through while APNs is down")

        try await drill.sut.standIn.comeBack()
        let upAt = drill.sut.flow.clock.date
        try await drill.run(for: .seconds(60))
        try await drill.sut.flow.riderStep("delivered")
        try await drill.run(for: .seconds(30 * 60))
        #expect(try await drill.sut.flow.outbox().isEmpty, "the outbox drained")

        let received = try await drill.sut.standIn.received()
        let after = drill.deliveries.dropFirst(before)
        // Exactly once: one 200 per APNs id, however many attempts the outage caused.
        let ids = drill.deliveries.compactMap { $0.headers["apns-id"] }
        #expect(ids.count == drill.deliveries.count && Set(ids).count == ids.count, "\(ids)")
        // Every attempt of one message carries the same collapse id, and each stage's alert got through once under its
        // own.
        var collapseByID: [String: Set<String>] = [:]
        for r in received {
            let h = r["headers"] as? [String: String] ?? [:];
            collapseByID[h["apns-id"] ?? "", default: []].insert(h["apns-collapse-id"] ?? "")
        }
        #expect(collapseByID.values.allSatisfy { $0.count == 1 })
        let order = drill.sut.flow.orderId
        let alerts = after.filter { !$0.isLiveActivity }.compactMap { $0.headers["apns-collapse-id"] }
        #expect(
            alerts.sorted()
                == ["picking", "onTheWay", "arriving", "delivered"].map { "order-\(order)-\($0)" }.sorted(), "\(alerts)"
        )
        #expect(after.allSatisfy { $0.at >= upAt })
        // Nothing after its expiry: each delivery came no later than its apns-expiration.
        for d in drill.deliveries {
            let expiry = try #require(d.headers["apns-expiration"].flatMap(Double.init))
            #expect(
                d.at.timeIntervalSince1970 <= expiry,
                "\(d.headers["apns-collapse-id"] ?? "live activity") sent \(d.at) after \(expiry)")
        }
        // The picking update went stale during the outage and was never sent; the end was. The arriving update
        // is still fresh when connections come back; after 503s, APNs' own backoff keeps it waiting past the end.
        let activity = drill.deliveries.filter(\.isLiveActivity)
        let statuses = activity.compactMap { ($0.aps["content-state"] as? [String: Any])?["status"] as? String }
        #expect(!statuses.contains("picking"), "\(statuses)")
        #expect(activity.last?.aps["event"] as? String == "end")
        if outage == .refuse { #expect(statuses == ["arriving", "delivered"], "\(statuses)") }
        let stamps = activity.compactMap { $0.aps["timestamp"] as? Int }
        #expect(stamps.count == activity.count && zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 }, "\(stamps)")
        if outage == .serviceUnavailable {
            #expect(received.contains { $0["down"] as? Bool == true }, "the stand-in answered 503 during the outage")
        }
    }
}
