public import Foundation
public import EnRouteModels

/// The whole city for one run: providers online from the start, rides and orders arriving as Poisson processes at
/// the demand's rates (stepped by its profile), merchants at their counters; a progress line; at the end a drain
/// (none after `stop()`), faults off, the server's findings and the report.
@MainActor
public final class CitySimulation {
    /// What to simulate.
    public struct Plan: Sendable {
        public var providers: Int
        public var ridesPerMinute: Double
        public var ordersPerMinute: Double
        /// Simulated seconds of demand; trips still running then get `drainSeconds` more to finish.
        public var durationSeconds: Double
        public var drainSeconds: Double
        /// Share of the rides booked ahead (0…1), each for `bookedAheadSeconds` after its request.
        public var scheduledShare: Double
        /// How both rates vary over the run (steady, or a rush hour).
        public var profile: DemandProfile
        public init(
            providers: Int, ridesPerMinute: Double, ordersPerMinute: Double, durationSeconds: Double,
            drainSeconds: Double = 600, scheduledShare: Double = 0, profile: DemandProfile = .steady
        ) {
            self.providers = providers; self.ridesPerMinute = ridesPerMinute; self.ordersPerMinute = ordersPerMinute
            self.durationSeconds = durationSeconds; self.drainSeconds = drainSeconds
            self.scheduledShare = scheduledShare; self.profile = profile
        }
        /// The demand the run was asked for, as the report states it.
        public var demand: SimulationReport.DemandFigures {
            .init(ridesPerMinute: ridesPerMinute, ordersPerMinute: ordersPerMinute, profile: profile)
        }
        /// How far ahead a booked ride is booked: 20 to 60 minutes.
        public static let bookedAheadSeconds: ClosedRange<Double> = 1200...3600
    }

    private let plan: Plan
    private let context: SimulationContext
    private let inspection: (any ServerInspection)?
    private let progress: @Sendable (String) -> Void
    private var random: SeededGenerator
    /// Which rides are booked ahead, and for when: a stream of its own, so the rest of the city draws the same.
    private var booking: SeededGenerator
    /// The latest time a booked ride is due, in simulated seconds since the start: the drain waits for it.
    private var lastDue = 0.0
    private var active = 0
    /// Every ride and order under way; cancelled when the drain runs out.
    private var trips: [Task<Void, Never>] = []
    /// The demand and the drain after it; `stop()` cancels it.
    private var demand: Task<Void, Never>?
    private var stopped = false

    /// A run of `plan` in `context`; `inspection` answers for the server at the end; `progress` gets a status line now
    /// and then.
    public init(
        plan: Plan, context: SimulationContext, inspection: (any ServerInspection)?,
        progress: @escaping @Sendable (String) -> Void
    ) {
        self.plan = plan; self.context = context; self.inspection = inspection; self.progress = progress
        random = SeededGenerator(seed: context.seed, stream: "city")
        booking = SeededGenerator(seed: context.seed, stream: "booking")
    }

    /// Runs the city and returns the report and the raw observations behind it.
    public func run() async throws -> (report: SimulationReport, observations: SimulationObservations) {
        guard !context.places.isEmpty else { throw SimulationOptionError("the map has no places to drive between") }
        var providers: [SimulatedProvider] = []
        for n in 0..<plan.providers {
            providers.append(try SimulatedProvider(id: "sim-provider-\(n + 1)", start: place(), context: context))
        }
        let kitchens = try context.merchants.map { try SimulatedKitchen(merchant: $0, context: context) }
        let shifts = providers.map { provider in Task { await provider.run() } }
        let counters = kitchens.map { kitchen in Task { await kitchen.run() } }
        let reporter = Task { await self.reportProgress() }
        let demand = Task { await self.demandAndDrain() }
        self.demand = demand
        if stopped { demand.cancel() }
        await demand.value
        for trip in trips { trip.cancel() }
        context.faultSwitch.set(false)
        for task in shifts { task.cancel() }
        for provider in providers { await provider.finish() }
        for task in counters { task.cancel() }
        reporter.cancel()
        let seen = context.log.snapshot
        let quotes = seen.estimatesShown.compactMap(\.quoteId)
        let findings = try await inspection?.findings(trips: seen.tripIDs, quotes: quotes) ?? .unknown
        return (SimulationReport(seen, server: findings, demand: plan.demand), seen)
    }

    /// Ends the run now (Ctrl-C): no more demand and no drain; trips under way are abandoned, then the providers go
    /// offline and the report is made as after a full run.
    public func stop() {
        stopped = true
        demand?.cancel()
    }

    /// Rides and orders arrive for the plan's duration; then trips under way finish, or the drain runs out. Cancelled
    /// by `stop()`.
    private func demandAndDrain() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.arrivals(kind: .ride) }
            group.addTask { await self.arrivals(kind: .order) }
            await group.waitForAll()
        }
        // Demand is over: trips under way finish (or the drain runs out), then faults stop and the devices empty their
        // stores. A ride booked ahead is under way until it is due, and gets the drain after that.
        let deadline = max(context.second, lastDue) + plan.drainSeconds
        while active > 0, context.second < deadline {
            guard await context.pause(5) else { break }
        }
    }

    private enum Kind { case ride, order }

    private func arrivals(kind: Kind) async {
        let perMinute = kind == .ride ? plan.ridesPerMinute : plan.ordersPerMinute
        guard perMinute > 0 else { return }
        var n = 0
        while context.second < plan.durationSeconds {
            // One unit exponential per arrival, as a steady run always drew: the profile spends it at its rates.
            let now = context.second
            let work = random.exponential(mean: 1)
            let next = plan.profile.nextArrival(after: now, work: work, perSecond: perMinute / 60)
            guard await context.pause(next - now) else { break }
            guard context.second < plan.durationSeconds else { break }
            n += 1
            let from = place(), to = place()
            let merchant =
                context.merchants.isEmpty
                ? nil
                : context.merchants[Int(random.unit() * Double(context.merchants.count)) % context.merchants.count]
            let account = kind == .ride ? "sim-rider-\(n)" : "sim-shopper-\(n)"
            let ahead = kind == .ride ? bookedAhead() : nil
            if let ahead { lastDue = max(lastDue, context.second + ahead) }
            active += 1
            trips.append(
                Task {
                    await self.trip(kind, account: account, from: from, to: to, merchant: merchant, bookedAhead: ahead)
                })
        }
    }

    /// Seconds ahead the next ride is booked for, nil for a ride asked for now; draws nothing when none is booked.
    private func bookedAhead() -> Double? {
        guard plan.scheduledShare > 0, booking.unit() < plan.scheduledShare else { return nil }
        let range = Plan.bookedAheadSeconds
        return range.lowerBound + (range.upperBound - range.lowerBound) * booking.unit()
    }

    private func trip(
        _ kind: Kind, account: String, from: Coordinate, to: Coordinate, merchant: SimulatedMerchant?,
        bookedAhead: Double?
    ) async {
        defer { active -= 1 }
        switch kind {
        case .ride:
            guard let rider = try? SimulatedRider(account: account, context: context) else { return }
            await rider.ride(from: from, to: to, bookedAhead: bookedAhead)
        case .order:
            guard let merchant, let shopper = try? SimulatedShopper(account: account, context: context) else { return }
            await shopper.order(from: merchant, to: to)
        }
    }

    private func place() -> Coordinate {
        context.places[Int(random.unit() * Double(context.places.count)) % context.places.count]
    }

    private func reportProgress() async {
        var lastFixes = 0, lastSecond = context.second
        while !Task.isCancelled {
            guard await context.pause(30) else { return }
            let seen = context.log.snapshot, second = context.second
            let rate = Double(seen.fixesRecorded - lastFixes) / max(1, second - lastSecond)
            lastFixes = seen.fixesRecorded; lastSecond = second
            let time = String(format: "%02d:%02d", Int(second) / 60, Int(second) % 60)
            progress(
                "t=\(time) active \(active) · rides \(seen.ridesRequested) (done \(seen.ridesCompleted), no driver "
                    + "\(seen.ridesNoProvider), cancelled \(seen.ridesCancelled))"
                    + " · orders \(seen.ordersPlaced) (delivered \(seen.ordersDelivered)) · offers "
                    + "\(seen.offersReceived) (expired \(seen.offersExpired))"
                    + " · fixes/s \(String(format: "%.1f", rate))")
        }
    }
}
