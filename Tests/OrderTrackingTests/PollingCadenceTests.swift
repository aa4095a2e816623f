import Foundation
import Testing
import HTTPTransport
@testable import OrderTracking

@Suite struct PollingCadenceTests {
    @Test(arguments: [
        (OrderStatus.placed, Duration?.some(.seconds(15))),
        (.picking, .seconds(15)),
        (.problem(message: "Rider delayed"), .seconds(15)),
        (.onTheWay, .seconds(5)),
        (.arriving, .seconds(5)),
        (.delivered, nil),
        (.cancelled(reason: "Hub closed"), nil),
    ])
    func cadenceByStage(status: OrderStatus, expected: Duration?) {
        #expect(PollingCadence().interval(for: status) == expected)
    }

    @Test func backsOffFiveTenTwentyThenThirty() {
        let cadence = PollingCadence()
        let delays = (1...6).map { cadence.delay(afterFailures: $0, error: FakeError.offline) }
        #expect(delays == [.seconds(5), .seconds(10), .seconds(20), .seconds(30), .seconds(30), .seconds(30)])
    }

    @Test func aFailureNeverPollsSoonerThanTheStageDoes() {
        let cadence = PollingCadence()
        let picking = (1...4).map { cadence.delay(afterFailures: $0, error: FakeError.offline, during: .picking) }
        #expect(picking == [.seconds(15), .seconds(15), .seconds(20), .seconds(30)])
        let onTheWay = (1...2).map { cadence.delay(afterFailures: $0, error: FakeError.offline, during: .onTheWay) }
        #expect(onTheWay == [.seconds(5), .seconds(10)])
    }

    @Test func honoursALongerRetryAfter() {
        let cadence = PollingCadence()
        #expect(cadence.delay(afterFailures: 1, error: APIError.retryAfter(.seconds(60), status: 429)) == .seconds(60))
        #expect(cadence.delay(afterFailures: 4, error: APIError.retryAfter(.seconds(2), status: 503)) == .seconds(30))
    }
}
