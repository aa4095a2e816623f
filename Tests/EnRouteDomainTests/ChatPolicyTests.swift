import Foundation
import Testing
import EnRouteDomain
import EnRouteModels

/// The chat's rules on their own: who, when, what, how often.
@Suite struct ChatPolicyTests {
    static let at = Date(timeIntervalSince1970: 1_792_520_000)

    static func trip(_ status: TripStatus = .ride(.driverAssigned), provider: String? = "p1") -> TripRecord {
        var trip = TripRecord(
            id: "T1", kind: .ride, status: status, customerId: "c1", pickup: Coordinate(lat: 60.17, lng: 24.94),
            dropoff: Coordinate(lat: 60.18, lng: 24.95), createdAt: at)
        trip.providerId = provider
        trip.merchantId = "m1"
        return trip
    }

    @Test(arguments: [
        (Account(id: "c1", role: .customer), ChatPolicy.Access.party(.customer)),
        (Account(id: "p1", role: .provider), .party(.provider)),
        (Account(id: "ops", role: .ops), .readOnly),
        (Account(id: "c2", role: .customer), .none),
        (Account(id: "p2", role: .provider), .none),
        (Account(id: "m1", role: .merchant), .none),
        (Account(id: "c1", role: .provider), .none),
        (Account(id: "p1", role: .customer), .none),
    ])
    func onlyTheTripsCustomerAndProviderWriteAndOpsRead(account: Account, expected: ChatPolicy.Access) {
        #expect(ChatPolicy().access(account, to: Self.trip()) == expected)
    }

    @Test func theConversationClosesWhenTheTripEndsAndWaitsForAProvider() {
        let policy = ChatPolicy()
        #expect(policy.state(of: Self.trip()) == .open)
        #expect(
            policy.state(of: Self.trip(.ride(.searching), provider: nil))
                == .waiting(reason: "No provider holds the trip yet."))
        #expect(policy.state(of: Self.trip(.ride(.completed))) == .closed(reason: "The trip has ended."))
        #expect(policy.state(of: Self.trip(.ride(.cancelled))) == .closed(reason: "The trip was cancelled."))
        #expect(policy.state(of: Self.trip(.delivery(.delivered))) == .closed(reason: "The order was delivered."))
    }

    @Test func messagesAreRemovedTheStatedTimeAfterTheEnd() {
        #expect(ChatPolicy(retention: 3600).removalTime(endedAt: Self.at) == Self.at.addingTimeInterval(3600))
        #expect(ChatPolicy().retention == 24 * 3600)
    }

    @Test func textMustBeUTF8NotBlankAndWithinTheByteLimit() throws {
        let policy = ChatPolicy(maxMessageBytes: 8)
        #expect(try policy.text(from: Array("hei!".utf8)) == "hei!")
        #expect(throws: ChatError.invalidUTF8) { try policy.text(from: [0x68, 0xC3, 0x28]) }
        #expect(throws: ChatError.invalidUTF8) { try policy.text(from: [0xED, 0xA0, 0x80]) }  // a lone surrogate
        #expect(throws: ChatError.empty) { try policy.check(" \n\t") }
        // Bytes, not characters: four two-byte letters fit, a fifth does not.
        #expect(throws: Never.self) { try policy.check("ääää") }
        #expect(throws: ChatError.tooLong(limit: 8)) { try policy.check("äääää") }
    }

    @Test(arguments: ["", " ", "a b", "a\u{7}", String(repeating: "x", count: 101)])
    func aMalformedMessageIdIsRefused(id: String) {
        #expect(throws: ChatError.invalidMessageId) { try ChatPolicy().check(messageId: id) }
    }

    @Test func theBucketAllowsABurstThenOneEveryInterval() {
        let policy = ChatPolicy(burst: 3, refillInterval: 2)
        var bucket = ChatPolicy.Bucket(policy: policy, now: Self.at)
        for _ in 0..<3 { #expect(bucket.take(at: Self.at, policy: policy) == nil) }
        #expect(bucket.take(at: Self.at, policy: policy) == 2)
        #expect(bucket.take(at: Self.at.addingTimeInterval(1), policy: policy) == 1)
        #expect(bucket.take(at: Self.at.addingTimeInterval(2), policy: policy) == nil)
        #expect(!bucket.isFull(at: Self.at.addingTimeInterval(2), policy: policy))
        #expect(bucket.isFull(at: Self.at.addingTimeInterval(8), policy: policy))
    }
}
