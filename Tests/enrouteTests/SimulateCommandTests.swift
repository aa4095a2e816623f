import Foundation
import Testing
@testable import enroute
import CitySimulator
import EnRouteModels
import EnRouteDomain
import TestSupport

/// `enroute simulate`: its flags, and a short whole run against the embedded server on a manual clock.
@Suite struct SimulateCommandTests {
    @Test(arguments: [
        (["--providers", "0"], "--providers must be 1...100000, got 0"),
        (
            ["--demand", "6"],
            "--demand must be RIDES,ORDERS per minute, two numbers ≥ 0 not both 0 (e.g. 6,6), got '6'"
        ),
        (["--duration", "30x"], "--duration must be a time such as 90s, 30m or 1h, or forever, got '30x'"),
        (["--duration", "0"], "--duration must be a time such as 90s, 30m or 1h, or forever, got '0'"),
        (["--seed", "-1"], "--seed must be a whole number ≥ 0, got '-1'"),
        (["--faults", "loss=2"], "--faults: loss must be at least 0 and below 1, got 2"),
        (
            ["--server", "http://127.0.0.1:8080", "--speedup", "10"],
            "--speedup must be 1 with --server: a running server keeps real time (only the embedded server runs on the "
                + "simulator's clock)"
        ),
        (["--server", "ftp://x"], "--server must be an http(s) base URL such as http://127.0.0.1:8080, got 'ftp://x'"),
        (["--dispatch", "batch"], "--dispatch must be greedy or batched, got 'batch'"),
        (["--dispatch-window", "0"], "--dispatch-window must be between 0.1 and 30.0, got 0"),
        (["--dispatch-window", "2s"], "--dispatch-window must be a number, got '2s'"),
        (["--scheduled-share", "1.5"], "--scheduled-share must be between 0.0 and 1.0, got 1.5"),
        (
            ["--rush-hour", "10m-20m"],
            "--rush-hour must be FROM-TO:FACTOR, two times such as 10m or 90s (FROM before TO) and a factor "
                + "above 0 (e.g. 10m-20m:3), got '10m-20m'"
        ),
        (
            ["--rush-hour", "10m:3"],
            "--rush-hour must be FROM-TO:FACTOR, two times such as 10m or 90s (FROM before TO) and a factor "
                + "above 0 (e.g. 10m-20m:3), got '10m:3'"
        ),
        (
            ["--rush-hour", "20m-10m:3"],
            "--rush-hour must be FROM-TO:FACTOR, two times such as 10m or 90s (FROM before TO) and a factor "
                + "above 0 (e.g. 10m-20m:3), got '20m-10m:3'"
        ),
        (
            ["--rush-hour", "10m-10m:3"],
            "--rush-hour must be FROM-TO:FACTOR, two times such as 10m or 90s (FROM before TO) and a factor "
                + "above 0 (e.g. 10m-20m:3), got '10m-10m:3'"
        ),
        (
            ["--rush-hour", "10m-20m:0"],
            "--rush-hour must be FROM-TO:FACTOR, two times such as 10m or 90s (FROM before TO) and a factor "
                + "above 0 (e.g. 10m-20m:3), got '10m-20m:0'"
        ),
        (
            ["--rush-hour", "10m-20m:-1"],
            "--rush-hour must be FROM-TO:FACTOR, two times such as 10m or 90s (FROM before TO) and a factor "
                + "above 0 (e.g. 10m-20m:3), got '10m-20m:-1'"
        ),
        (
            ["--rush-hour", "10x-20m:3"],
            "--rush-hour must be FROM-TO:FACTOR, two times such as 10m or 90s (FROM before TO) and a factor "
                + "above 0 (e.g. 10m-20m:3), got '10x-20m:3'"
        ),
        (
            ["--rush-hour", "10m-20m:nan"],
            "--rush-hour must be FROM-TO:FACTOR, two times such as 10m or 90s (FROM before TO) and a factor "
                + "above 0 (e.g. 10m-20m:3), got '10m-20m:nan'"
        ),
        (
            ["--rush-hour", "-20m:3"],
            "--rush-hour must be FROM-TO:FACTOR, two times such as 10m or 90s (FROM before TO) and a factor "
                + "above 0 (e.g. 10m-20m:3), got '-20m:3'"
        ),
        (
            ["--duration", "30m", "--rush-hour", "30m-40m:2"],
            "--rush-hour starts at 1800 s, not before the end of --duration (1800 s), got '30m-40m:2'"
        ),
        (["--delivery-assignment", "soon"], "--delivery-assignment must be now or late, got 'soon'"),
        (
            ["--server", "http://127.0.0.1:8080", "--speedup", "1", "--stack-capacity", "1"],
            "--stack-capacity cannot be used with --server: a running server dispatches by its own policy (give it "
                + "to enroute serve)"
        ),
        (
            ["--server", "http://127.0.0.1:8080", "--speedup", "1", "--dispatch", "batched"],
            "--dispatch cannot be used with --server: a running server dispatches by its own policy (give it to "
                + "enroute serve)"
        ),
        (
            ["--server", "http://127.0.0.1:8080", "--speedup", "1", "--dispatch-window", "1"],
            "--dispatch-window cannot be used with --server: a running server dispatches by its own policy (give it "
                + "to enroute serve)"
        ),
    ])
    func everyBadValueIsAClearError(args: [String], message: String) throws {
        let options = try SimulateCommand.spec.parse(args, environment: [:])
        #expect(throws: CLIError(message)) { try SimulateCommand.settings(options) }
    }

    @Test func theIssuesFlagsAreRead() throws {
        let options = try SimulateCommand.spec.parse(
            [
                "--providers", "200", "--demand", "6,4.5", "--speedup", "10", "--duration", "30m",
                "--seed", "7", "--faults", "loss=0.1,partition=20,every=120", "--report", "out",
            ],
            environment: [:])
        let s = try SimulateCommand.settings(options)
        #expect(s.providers == 200 && s.ridesPerMinute == 6 && s.ordersPerMinute == 4.5 && s.speedup == 10)
        #expect(s.durationSeconds == 1800 && s.seed == 7 && s.report == "out")
        #expect(s.faults == FaultPlan(loss: 0.1, partitionSeconds: 20, everySeconds: 120))
    }

    /// The embedded server's matching comes from the same flags as `enroute serve`'s; greedy by default.
    @Test func theDispatchFlagsSetTheEmbeddedServersPolicy() throws {
        let given = try SimulateCommand.settings(
            SimulateCommand.spec.parse(["--dispatch", "batched", "--dispatch-window", "0.5"], environment: [:]))
        #expect(given.dispatch.matching == .batched && given.dispatch.batchWindow == .milliseconds(500))
        let stacking = try SimulateCommand.settings(
            SimulateCommand.spec.parse(
                ["--delivery-assignment", "late", "--stack-capacity", "1", "--stack-limit", "60"], environment: [:]))
        #expect(stacking.dispatch.deliveryAssignment == .late && stacking.dispatch.stackCapacity == 1)
        #expect(stacking.dispatch.stackLimit == .seconds(60))
        let plain = try SimulateCommand.settings(SimulateCommand.spec.parse([], environment: [:]))
        #expect(plain.dispatch == DispatchPolicy())
    }

    /// A rush hour steps both rates between its times; without one demand is steady.
    @Test func theRushHourIsReadIntoTheDemandProfile() throws {
        let rush = try SimulateCommand.settings(
            SimulateCommand.spec.parse(["--duration", "35m", "--rush-hour", "10m-25m:4"], environment: [:]))
        #expect(rush.profile == DemandProfile(rushHour: .init(fromSecond: 600, toSecond: 1500, factor: 4)))
        let fromStart = try SimulateCommand.settings(
            SimulateCommand.spec.parse(["--rush-hour", "0-90s:0.5"], environment: [:]))
        #expect(fromStart.profile.rushHour == .init(fromSecond: 0, toSecond: 90, factor: 0.5))
        let plain = try SimulateCommand.settings(SimulateCommand.spec.parse([], environment: [:]))
        #expect(plain.profile == .steady)
    }

    /// `make demo` runs the city against its server until Ctrl-C.
    @Test func foreverIsDemandWithoutAnEnd() throws {
        let options = try SimulateCommand.spec.parse(
            ["--server", "http://127.0.0.1:8080", "--speedup", "1", "--duration", "forever"],
            environment: [:])
        let s = try SimulateCommand.settings(options)
        #expect(s.durationSeconds == .infinity && s.server == URL(string: "http://127.0.0.1:8080"))
    }

    // The end-to-end run is Tests/Terminal/simulate.sh: in a process of its own, its real-time pace cannot starve the
    // suite's live-socket tests of the two-thread cooperative pool.
}
