import Foundation
import Testing
@testable import HTTPEngine

/// The connection cap sits below the descriptor limit, so that the cap's eviction and 503 come before `accept` fails.
@Suite struct DescriptorBudgetTests {
    @Test(
        arguments: [
            // (descriptor limit, requested cap) → (cap, refusal headroom, reserve)
            (1_048_576, 20_000, 20_000, 256, 512),
            (20_000, 20_000, 19_488, 256, 512),
            (4_096, 20_000, 3_584, 256, 512),
            (1_024, 20_000, 512, 256, 512),
            (1_024, 100, 100, 256, 512),
            (64, 20_000, 32, 16, 32),
            (8, 20_000, 4, 2, 4),
            (1, 20_000, 1, 0, 1),
        ] as [(Int, Int, Int, Int, Int)])
    func theCapLeavesAReserveBelowTheDescriptorLimit(
        limit: Int, requested: Int, cap: Int, headroom: Int,
        reserve: Int
    ) {
        let budget = DescriptorBudget(descriptorLimit: limit, requestedCap: requested)
        #expect(budget.connectionCap == cap)
        #expect(budget.refusalHeadroom == headroom)
        #expect(budget.reserve == reserve)
        #expect(
            limit < 2 || budget.connectionCap + budget.refusalHeadroom < limit,
            "connections never take every descriptor")
    }

    @Test(
        arguments: [
            // (soft, hard (nil: unlimited), nr_open) → the soft limit to set
            (UInt64(1_024), UInt64?(524_288), UInt64(1_048_576), UInt64(524_288)),
            (20_000, 20_000, 1_048_576, 20_000),
            (1_024, nil, 1_048_576, 1_048_576),
            (2_000_000, nil, 1_048_576, 2_000_000),
        ] as [(UInt64, UInt64?, UInt64, UInt64)])
    func theSoftLimitIsRaisedToTheHardOne(soft: UInt64, hard: UInt64?, nrOpen: UInt64, raised: UInt64) {
        #expect(DescriptorBudget.raisedSoftLimit(soft: soft, hard: hard, nrOpen: nrOpen) == raised)
    }

    @Test func startingRaisesTheProcessSoftLimitToTheHardOne() {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let (_, after) = DescriptorLimit.raiseToHard()
        #expect(after == DescriptorLimit.current)
        #expect(limit.rlim_max == rlim_t.max || UInt64(after) == UInt64(limit.rlim_max))
    }
}
