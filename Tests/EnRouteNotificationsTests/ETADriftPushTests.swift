import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import EnRouteNotifications
import EnRouteAPNs
import TestSupport

/// ETA drift that comes from the rider's fixes, not from a status change, still reaches the Live Activity.
@Suite struct ETADriftPushTests {
    func fixes(_ flow: OrderFlow, at point: (Double, Double), batch: String) async throws {
        let json =
            #"{"batchId":"\#(batch)","fixes":[{"lat":\#(point.0),"lng":\#(point.1),"heading":0,"speed":8,"accuracy":5,"#
            + #""recordedAt":"\#(ISO8601.format(flow.clock.date))"}]}"#
        let r = await flow.backend.call(
            "POST", "/v1/provider/locations", token: flow.backend.token("r1", .provider), json: json)
        try #require(r.status == 200, "\(String(decoding: r.body, as: UTF8.self))")
    }

    @Test func fixesThatMoveTheETAPushALowPriorityUpdateRateLimited() async throws {
        var flow = OrderFlow()
        try await flow.place()
        try await flow.liveActivityToken(String(repeating: "ab", count: 16))
        try await flow.accept()
        try await flow.riderAndReady()
        try await flow.riderStep("onTheWay")
        let before = try await flow.outbox().filter { $0.kind == .liveActivity }.count

        // Past the budget window of the pushes so far, the rider heads the wrong way: the ETA moves by
        // minutes without any status change.
        await flow.clock.advance(by: .seconds(130))
        try await fixes(flow, at: (60.2300, 24.9900), batch: "b1")
        let drift = try await flow.outbox().filter { $0.kind == .liveActivity }.dropFirst(before)
        #expect(drift.count == 1)
        #expect(drift.first?.priority == 5)
        #expect(drift.first?.event == "update")
        #expect(drift.first?.timestamp == Int(flow.clock.date.timeIntervalSince1970))

        // Another big move a minute later stays inside the budget: no second low-priority push yet.
        await flow.clock.advance(by: .seconds(60))
        try await fixes(flow, at: (60.2150, 24.9700), batch: "b2")
        #expect(try await flow.outbox().filter { $0.kind == .liveActivity }.count == before + 1)

        // Two minutes after the last one it may push again, with a later timestamp.
        await flow.clock.advance(by: .seconds(70))
        try await fixes(flow, at: (60.2350, 25.0000), batch: "b3")
        let all = try await flow.outbox().filter { $0.kind == .liveActivity }.dropFirst(before)
        #expect(all.count == 2)
        #expect(all.allSatisfy { $0.priority == 5 })
        #expect((all.last?.timestamp ?? 0) > (all.first?.timestamp ?? 0))
    }
}
