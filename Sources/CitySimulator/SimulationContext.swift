public import Foundation
public import ClientKit
public import HTTPTransport
public import EnRouteModels

/// A merchant the simulated customers order from.
public struct SimulatedMerchant: Sendable, Equatable {
    public let id: String
    public let position: Coordinate
    /// The skus customers put in baskets.
    public let skus: [String]
    public init(id: String, position: Coordinate, skus: [String]) {
        self.id = id; self.position = position; self.skus = skus
    }
}

/// Everything the simulated parties share: where the server is, how to reach it, the run's clock and seed, the map's
/// places and merchants, the faults, and the log they write what they see into.
public struct SimulationContext: Sendable {
    /// The server's base URL.
    public var baseURL: URL
    /// A fresh transport for one device (each device gets its own, wrapped in its own faults).
    public var makeTransport: @Sendable () -> any HTTPClient
    /// A bearer token for an account in a role.
    public var token: @Sendable (_ account: String, _ role: SimulatedRole) throws -> String
    /// The run's one clock (simulated time), and the same time as dates.
    public var clock: any Clock<Duration>
    public var dates: any DateProvider
    /// The simulated date the run started at.
    public var start: Date
    public var seed: UInt64
    public var faults: FaultPlan
    public var faultSwitch: FaultSwitch
    public var speeds: SpeedModel
    /// The city's hour of the day for a date (road speeds by hour).
    public var hour: @Sendable (Date) -> Int
    /// Points on the main road network where rides start and end and orders are delivered.
    public var places: [Coordinate]
    public var merchants: [SimulatedMerchant]
    /// Where device stores (point buffers, outboxes) are kept.
    public var storeDirectory: URL
    public var log: ObservationLog

    /// A context with every field given.
    public init(
        baseURL: URL, makeTransport: @escaping @Sendable () -> any HTTPClient,
        token: @escaping @Sendable (String, SimulatedRole) throws -> String, clock: any Clock<Duration>,
        dates: any DateProvider,
        start: Date, seed: UInt64, faults: FaultPlan, faultSwitch: FaultSwitch, speeds: SpeedModel,
        hour: @escaping @Sendable (Date) -> Int, places: [Coordinate], merchants: [SimulatedMerchant],
        storeDirectory: URL,
        log: ObservationLog
    ) {
        self.baseURL = baseURL; self.makeTransport = makeTransport; self.token = token; self.clock = clock;
        self.dates = dates
        self.start = start; self.seed = seed; self.faults = faults; self.faultSwitch = faultSwitch; self.speeds = speeds
        self.hour = hour; self.places = places; self.merchants = merchants; self.storeDirectory = storeDirectory;
        self.log = log
    }

    /// Simulated seconds since the start.
    public var second: Double { dates.now().timeIntervalSince(start) }

    /// One device's network: its own transport, its own faults (its dead-zone phase and loss draws from `name`).
    public func network(
        for name: String, observe: @escaping @Sendable (String, String) -> Void = { _, _ in }
    ) -> FaultyHTTPClient {
        var generator = SeededGenerator(seed: seed, stream: "net:" + name)
        let phase = generator.unit()
        let dates = self.dates, start = self.start
        return FaultyHTTPClient(
            inner: makeTransport(), plan: faults, phase: phase, generator: generator, faults: faultSwitch,
            second: { dates.now().timeIntervalSince(start) }, observe: observe)
    }

    /// The API server as `account` in `role` sees it.
    public func server(_ account: String, _ role: SimulatedRole) throws -> APIServer {
        APIServer(baseURL: baseURL, credentials: StaticAccessToken(try token(account, role)))
    }

    /// Sleeps `seconds` of simulated time; false when cancelled.
    func pause(_ seconds: Double) async -> Bool {
        do {
            try await clock.sleep(for: .milliseconds(Int64(max(0, seconds) * 1000)), tolerance: nil); return true
        } catch { return false }
    }
}

/// The parties the simulator signs in as (the server's roles by name).
public enum SimulatedRole: String, Sendable, CaseIterable {
    case customer, provider, merchant, ops
}
