import Testing
@testable import EnRouteDomain
@testable import EnRouteAPI

@Suite struct RateLimitPolicyTests {
    func makeSUT(_ limit: Int = 10, per period: Duration = .seconds(60), minimumSweep: Int = 1024) -> RateLimitPolicy {
        RateLimitPolicy(RateLimit(limit, per: period), minimumSweep: minimumSweep)
    }

    @Test func aFullBucketLetsTheWholeLimitThroughAtOnceAndRefusesTheNext() {
        var sut = makeSUT()
        let decisions = (0..<11).map { _ in sut.admit("ana", at: .zero) }
        #expect(decisions.prefix(10).allSatisfy { $0.allowed })
        #expect(decisions.prefix(10).map(\.remaining) == [9, 8, 7, 6, 5, 4, 3, 2, 1, 0])
        #expect(!decisions[10].allowed)
        #expect(decisions[10].remaining == 0)
    }

    /// 10 per 60 s refills one request every 6 s: the refusal says 6, and at 6 s one more passes.
    @Test func aRefusalSaysWhenOneRequestWillPassAndItDoes() {
        var sut = makeSUT()
        for _ in 0..<10 { _ = sut.admit("ana", at: .zero) }
        let refused = sut.admit("ana", at: .seconds(1))
        #expect(refused.retryAfterSeconds == 5)
        #expect(!sut.admit("ana", at: .milliseconds(5_999)).allowed)
        let again = sut.admit("ana", at: .seconds(6))
        #expect(again.allowed && again.remaining == 0 && again.retryAfterSeconds == nil)
        #expect(!sut.admit("ana", at: .seconds(6)).allowed)
    }

    @Test func refusedRequestsDoNotDrainTheBucketFurther() {
        var sut = makeSUT()
        for _ in 0..<10 { _ = sut.admit("ana", at: .zero) }
        for _ in 0..<100 { _ = sut.admit("ana", at: .seconds(3)) }
        #expect(sut.admit("ana", at: .seconds(6)).allowed)
    }

    @Test func theBucketRefillsEvenlyUpToTheLimitAndNoFurther() {
        var sut = makeSUT()
        for _ in 0..<10 { _ = sut.admit("ana", at: .zero) }
        #expect(sut.admit("ana", at: .seconds(30)).remaining == 4)  // five back, one taken
        let rested = sut.admit("ana", at: .seconds(3600))
        #expect(rested.remaining == 9)
        #expect(rested.resetSeconds == 6)
    }

    @Test func accountsHaveTheirOwnBuckets() {
        var sut = makeSUT(2)
        _ = sut.admit("ana", at: .zero); _ = sut.admit("ana", at: .zero)
        #expect(!sut.admit("ana", at: .zero).allowed)
        #expect(sut.admit("ben", at: .zero).allowed)
    }

    /// Reset counts the seconds until the whole allowance is back; it rounds up.
    @Test func theHeaderFieldsCarryLimitRemainingResetPolicyAndRetryAfterOnlyWhenRefused() {
        var sut = makeSUT(3, per: .seconds(10))
        let first = sut.admit("ana", at: .zero)
        #expect(
            first.headers.map(\.name) == [
                "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy",
            ])
        #expect(first.headers.map(\.value) == ["3", "2", "4", "3;w=10"])  // 3.33 s per request, rounded up
        _ = sut.admit("ana", at: .zero); _ = sut.admit("ana", at: .zero)
        let refused = sut.admit("ana", at: .seconds(1))
        #expect(refused.headers.map(\.value) == ["3", "0", "9", "3;w=10", "3"])
        #expect(refused.headers.last?.name == "Retry-After")
    }

    @Test func aBucketThatHasRefilledCompletelyIsDroppedAtTheNextSweep() {
        var sut = makeSUT(minimumSweep: 4)
        for name in ["a", "b", "c"] { _ = sut.admit(name, at: .zero) }
        #expect(sut.trackedAccounts == 3)
        _ = sut.admit("d", at: .seconds(6))  // the fourth account triggers a sweep; a, b and c are full again
        #expect(sut.trackedAccounts == 1)
    }

    /// A million accounts, a thousand a second, each sending one create: memory follows the accounts
    /// of the last six seconds (the refill time of one request), not all who ever came.
    @Test func aMillionPassingAccountsDoNotGrowTheTable() {
        var sut = makeSUT()
        var most = 0
        for i in 0..<1_000_000 {
            let decision = sut.admit("account-\(i)", at: .milliseconds(i))
            if !decision.allowed { Issue.record("account-\(i) was refused"); return }
            most = max(most, sut.trackedAccounts)
        }
        #expect(most <= 2 * 6_000 + 1_024, "at most twice the live set plus the sweep floor, got \(most)")
    }
}
