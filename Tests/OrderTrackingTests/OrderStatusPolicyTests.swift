import Foundation
import Testing
@testable import OrderTracking

@Suite struct OrderStatusPolicyTests {
    let policy = OrderStatusPolicy()

    @Test func acceptsTheFirstSnapshot() {
        #expect(policy.shouldReplace(nil, with: Fixture.snapshot(version: 1)))
    }

    @Test(arguments: [(6, false), (7, false), (8, true)])
    func newerVersionWins(incoming: Int, replaces: Bool) {
        #expect(
            policy.shouldReplace(
                Fixture.snapshot(version: 7), with: Fixture.snapshot(version: incoming, status: .picking)) == replaces)
    }

    /// A reassigned rider is a real move back to picking; comparing stages would hide it.
    @Test func aNewerVersionMayMoveAStageBack() {
        #expect(
            policy.shouldReplace(
                Fixture.snapshot(version: 7, status: .arriving), with: Fixture.snapshot(version: 8, status: .picking)))
    }

    @Test(arguments: [OrderStatus.delivered, .cancelled(reason: "Hub closed")])
    func terminalOrdersNeverReopen(terminal: OrderStatus) {
        let current = Fixture.snapshot(version: 9, status: terminal)
        #expect(!policy.shouldReplace(current, with: Fixture.snapshot(version: 10, status: .onTheWay)))
        #expect(!policy.shouldReplace(current, with: Fixture.snapshot(version: 10, status: .delivered)))
    }

    @Test func aProblemIsNotTerminal() {
        let current = Fixture.snapshot(version: 5, status: .problem(message: "Rider delayed"))
        #expect(policy.shouldReplace(current, with: Fixture.snapshot(version: 6, status: .onTheWay)))
    }

    @Test func neverMixesOrders() {
        #expect(!policy.shouldReplace(Fixture.snapshot("A", version: 1), with: Fixture.snapshot("B", version: 2)))
    }
}
