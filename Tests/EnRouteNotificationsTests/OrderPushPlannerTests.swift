import Foundation
import Testing
import TestSupport
import EnRouteNotifications
import EnRouteAPNs
import EnRouteDomain
import EnRouteAPI

@Suite struct OrderPushPlannerTests {
    @Test func eachStageChangeEnqueuesOneOrderUpdateInTheSameTransaction() async throws {
        var flow = OrderFlow()
        try await flow.place()
        #expect(try await flow.outbox().isEmpty, "placing an order announces nothing")
        try await flow.accept()
        try await flow.riderAndReady()
        try await flow.riderStep("onTheWay")
        try await flow.riderStep("arriving")
        try await flow.riderStep("delivered")
        let alerts = try await flow.outbox().filter { $0.kind == .orderUpdate }
        #expect(alerts.map(\.stage) == [.picking, .onTheWay, .arriving, .delivered])
        #expect(Set(alerts.compactMap(\.notificationId)).count == 4)
        #expect(alerts.allSatisfy { $0.accountId == "c1" && $0.orderId == flow.orderId })
    }

    @Test func riderStagesCarryTheRiderButPickingDoesNot() async throws {
        var flow = OrderFlow()
        try await flow.place()
        try await flow.accept()
        try await flow.riderAndReady()
        try await flow.riderStep("onTheWay")
        let alerts = try await flow.outbox().filter { $0.kind == .orderUpdate }
        #expect(alerts[0].riderFirstName == nil)
        #expect(alerts[1].riderFirstName == "Ana")
        #expect(alerts[1].imageUrl == "https://img.enroute.invalid/rider/12.jpg")
    }

    @Test func aNewProblemIsAnnouncedOnce() async throws {
        var flow = OrderFlow()
        try await flow.place()
        try await flow.accept()
        try await flow.problem("The shop is out of bread")
        let alerts = try await flow.outbox().filter { $0.kind == .orderUpdate }
        #expect(alerts.map(\.stage) == [.picking, .problem])
    }

    @Test func liveActivityGetsAnUpdatePerStageAndAnEndWithRisingTimestamps() async throws {
        var flow = OrderFlow()
        try await flow.place()
        try await flow.liveActivityToken("a1b2c3d4e5f60718293a4b5c6d7e8f90")
        await flow.clock.advance(by: .seconds(60))
        try await flow.accept()
        await flow.clock.advance(by: .seconds(60))
        try await flow.riderAndReady()
        await flow.clock.advance(by: .seconds(60))
        try await flow.riderStep("onTheWay")
        await flow.clock.advance(by: .seconds(60))
        try await flow.riderStep("delivered")
        let activity = try await flow.outbox().filter { $0.kind == .liveActivity }
        let stageUpdates = activity.filter { $0.priority == 10 }
        #expect(stageUpdates.map(\.event) == ["update", "update", "end"])
        #expect(stageUpdates.map(\.status) == ["picking", "onTheWay", "delivered"])
        let stamps = activity.compactMap(\.timestamp)
        #expect(stamps == stamps.sorted() && Set(stamps).count == stamps.count, "timestamps rise: \(stamps)")
        let update = try #require(stageUpdates.first)
        #expect(update.staleDate == update.timestamp.map { $0 + 180 })
        #expect(update.liveActivityToken == "a1b2c3d4e5f60718293a4b5c6d7e8f90")
        #expect(stageUpdates.last?.staleDate == nil)
    }

    @Test func etaDriftIsALowPriorityUpdateAndRateLimited() async throws {
        var flow = OrderFlow()
        try await flow.place()
        try await flow.liveActivityToken("a1b2c3d4e5f60718293a4b5c6d7e8f90")
        try await flow.accept()  // stage change: priority 10
        await flow.clock.advance(by: .seconds(300))
        try await flow.riderAndReady()  // same stage, ETA moved by minutes: priority 5
        let drift = try await flow.outbox().filter { $0.kind == .liveActivity && $0.priority == 5 }
        #expect(drift.count == 1)
        #expect(drift.first?.event == "update")
    }

    @Test func aCourierGivingUpAnnouncesNothingToTheCustomer() async throws {
        var flow = OrderFlow()
        try await flow.place()
        try await flow.accept()
        try await flow.riderAndReady()
        try await flow.riderStep("onTheWay")
        try await flow.riderStep("cancelled")  // back to picking while another rider is found
        let alerts = try await flow.outbox().filter { $0.kind == .orderUpdate }
        #expect(alerts.map(\.stage) == [.picking, .onTheWay])
    }
}
