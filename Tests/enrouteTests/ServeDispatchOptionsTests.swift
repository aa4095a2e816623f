import EnRouteDomain
import Testing
@testable import enroute

/// `--dispatch` and `--dispatch-window`: the matching policy, or a usage error naming what to fix.
@Suite struct ServeDispatchOptionsTests {
    func policy(_ args: [String], environment: [String: String] = [:]) throws -> DispatchPolicy {
        try ServeCommand.dispatchPolicy(try ServeCommand.spec.parse(args, environment: environment))
    }

    @Test func greedyIsTheDefaultWithATwoSecondWindow() throws {
        let policy = try policy([])
        #expect(policy.matching == .greedy)
        #expect(policy.batchWindow == .seconds(2))
    }

    @Test func batchedMatchingAndItsWindowComeFromFlagsOrEnvironment() throws {
        let flags = try policy(["--dispatch", "batched", "--dispatch-window", "0.5"])
        #expect(flags.matching == .batched && flags.batchWindow == .milliseconds(500))
        let environment = try policy([], environment: ["ENROUTE_DISPATCH": "batched", "ENROUTE_DISPATCH_WINDOW": "3"])
        #expect(environment.matching == .batched && environment.batchWindow == .seconds(3))
    }

    @Test func aMistypedPolicyOrAWindowOutOfRangeIsAUsageError() {
        #expect(throws: CLIError("--dispatch must be greedy or batched, got 'batch'")) {
            _ = try policy(["--dispatch", "batch"])
        }
        #expect(throws: CLIError("ENROUTE_DISPATCH must be greedy or batched, got 'Greedy'")) {
            _ = try policy([], environment: ["ENROUTE_DISPATCH": "Greedy"])
        }
        #expect(throws: CLIError("--dispatch-window must be between 0.1 and 30.0, got 0")) {
            _ = try policy(["--dispatch-window", "0"])
        }
        #expect(throws: CLIError("--dispatch-window must be a number, got 'two'")) {
            _ = try policy(["--dispatch-window", "two"])
        }
    }

    @Test func deliveryAssignmentAndStackingComeFromFlagsOrEnvironment() throws {
        let defaults = try policy([])
        #expect(defaults.deliveryAssignment == .now && defaults.stackCapacity == 2)
        #expect(defaults.stackLimit == .seconds(300))
        let flags = try policy(["--delivery-assignment", "late", "--stack-capacity", "1", "--stack-limit", "120"])
        #expect(flags.deliveryAssignment == .late && flags.stackCapacity == 1 && flags.stackLimit == .seconds(120))
        let environment = try policy([], environment: ["ENROUTE_DELIVERY_ASSIGNMENT": "late"])
        #expect(environment.deliveryAssignment == .late)
        #expect(throws: CLIError("--delivery-assignment must be now or late, got 'later'")) {
            _ = try policy(["--delivery-assignment", "later"])
        }
        #expect(throws: CLIError("--stack-capacity must be 1...8, got 0")) {
            _ = try policy(["--stack-capacity", "0"])
        }
    }
}
