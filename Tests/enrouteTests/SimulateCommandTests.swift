import Foundation
import Testing
@testable import enroute
import CitySimulator
import ClientKit
import EnRouteModels
import EnRouteDomain
import TestSupport

/// `enroute simulate`: its flags, and a short whole run against the embedded server on a manual clock.
@Suite struct SimulateCommandTests {
    @Test(arguments: [
        (["--providers", "0"], "--providers must be 1...100000, got 0"),
        (["--demand", "6"], "--demand must be RIDES,ORDERS per minute, two numbers ≥ 0 not both 0 (e.g. 6,6), got '6'"),
        (["--duration", "30x"], "--duration must be a time such as 90s, 30m or 1h, got '30x'"),
        (["--seed", "-1"], "--seed must be a whole number ≥ 0, got '-1'"),
        (["--faults", "loss=2"], "--faults: loss must be at least 0 and below 1, got 2"),
        (["--server", "http://127.0.0.1:8080", "--speedup", "10"],
         "--speedup must be 1 with --server: a running server keeps real time (only the embedded server runs on the simulator's clock)"),
        (["--server", "ftp://x"], "--server must be an http(s) base URL such as http://127.0.0.1:8080, got 'ftp://x'"),
    ])
    func everyBadValueIsAClearError(args: [String], message: String) throws {
        let options = try SimulateCommand.spec.parse(args, environment: [:])
        #expect(throws: CLIError(message)) { try SimulateCommand.settings(options) }
    }

    @Test func theIssuesFlagsAreRead() throws {
        let options = try SimulateCommand.spec.parse(["--providers", "200", "--demand", "6,4.5", "--speedup", "10", "--duration", "30m",
                                                      "--seed", "7", "--faults", "loss=0.1,partition=20,every=120", "--report", "out"],
                                                     environment: [:])
        let s = try SimulateCommand.settings(options)
        #expect(s.providers == 200 && s.ridesPerMinute == 6 && s.ordersPerMinute == 4.5 && s.speedup == 10)
        #expect(s.durationSeconds == 1800 && s.seed == 7 && s.report == "out")
        #expect(s.faults == FaultPlan(loss: 0.1, partitionSeconds: 20, everySeconds: 120))
    }

    /// A few simulated minutes of central Helsinki with faults on: trips complete, no step is lost or applied twice,
    /// the ledger balances, every completed trip is captured, and report.json has every key.
    @Test(.timeLimit(.minutes(3)))
    func aShortCityRunCompletesTripsAndKeepsEveryStep() async throws {
        let roads = try await TestRoads.helsinki()
        // Simulated time at 40×: a ManualClock stepped by a test outruns work that never sleeps (in-process HTTP), so
        // the parties would see minutes pass in one request; the simulator's own clock keeps them in step.
        let clock = SimulatedClock(speedup: 40, start: Date(timeIntervalSince1970: 1_780_506_000))
        let city = CityMap(roads.graph.network, mainComponent: roads.graph.mainComponent, seed: 3, merchantCount: 2)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("simulate-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await EmbeddedServer.start(roads: roads, city: city, clock: clock, now: { clock.date }, directory: directory,
                                                    seed: 3, storage: .memory)
        let router = server.backend.router
        let context = SimulationContext(
            baseURL: server.baseURL, makeTransport: { InProcessHTTPClient(router: router) },
            token: { try server.backend.auth.token(account: $0, role: Party($1)) }, clock: clock, dates: clock.dates, start: clock.date,
            seed: 3, faults: FaultPlan(loss: 0.05, partitionSeconds: 20, everySeconds: 120), faultSwitch: FaultSwitch(),
            speeds: SpeedModel(seed: 3), hour: { _ in 12 }, places: city.places, merchants: city.merchants, storeDirectory: directory,
            log: ObservationLog())
        let plan = CitySimulation.Plan(providers: 6, ridesPerMinute: 1, ordersPerMinute: 1, durationSeconds: 180, drainSeconds: 1200)
        let run = Task { @MainActor in
            try await CitySimulation(plan: plan, context: context, inspection: server, progress: { _ in }).run()
        }
        let (report, seen) = try await run.value
        await server.stop()
        #expect(report.tripsCompleted > 0)
        #expect(report.stepsLost == 0)
        #expect(report.stepsDuplicated == 0)
        #expect(report.ledgerBalanced == true)
        #expect(report.paymentsCaptured == report.paymentsExpected)
        #expect(seen.fixesAccepted > 0)
        try SimulateCommand.writeReport(report, seen, to: directory.appendingPathComponent("report").path, title: "test")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("report/report.json"))) as? [String: Any]
        #expect(Set(json?.keys.map { $0 } ?? []) == Set(SimulationReport.keys))
    }
}
