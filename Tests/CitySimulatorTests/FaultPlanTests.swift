import Testing
import CitySimulator
import EnRouteModels

@Suite struct FaultPlanTests {
    @Test func readsTheIssuesSpelling() throws {
        let plan = try FaultPlan.parse("loss=0.1,partition=20,every=120")
        #expect(plan == FaultPlan(loss: 0.1, partitionSeconds: 20, everySeconds: 120))
    }

    @Test(arguments: [
        ("loss=1", "--faults: loss must be at least 0 and below 1, got 1"),
        ("loss=0.1,loss=0.2", "--faults: loss is given twice"),
        ("partition=20", "--faults: partition needs every=SECONDS, how often one starts"),
        ("partition=120,every=60", "--faults: partition (120.0 s) must be shorter than every (60.0 s)"),
        ("jitter=3", "--faults: unknown fault 'jitter' (known: loss, partition, every)"),
        ("loss", "--faults: 'loss' is not KEY=NUMBER (loss=0.1,partition=20,every=120)"),
    ])
    func refusesABadSpecNamingWhatIsWrong(text: String, message: String) {
        #expect(throws: SimulationOptionError(message)) { try FaultPlan.parse(text) }
    }

    /// A device is dark `partition` seconds of every `every`, never in the first period, and phases shift the window.
    @Test func deadZonesLastThePartitionOnceEveryPeriod() {
        let plan = FaultPlan(loss: 0, partitionSeconds: 20, everySeconds: 120)
        let dark = (0..<1200).filter { plan.isPartitioned(atSecond: Double($0), phase: 0) }
        #expect(dark.count == 9 * 20)
        #expect(!dark.contains { $0 < 120 })
        #expect(plan.isPartitioned(atSecond: 230, phase: 0))
        #expect(!plan.isPartitioned(atSecond: 230, phase: 0.5))
        #expect(!FaultPlan.none.isPartitioned(atSecond: 500, phase: 0))
    }
}

@Suite struct SpeedModelTests {
    /// The same road is always as fast, in both directions; factors stay within the spread and vary between roads.
    @Test func aRoadKeepsItsFactorAndFactorsStayInTheSpread() {
        let model = SpeedModel(seed: 7, spread: 0.2)
        let a = Coordinate(lat: 39.29, lng: -76.61), b = Coordinate(lat: 39.291, lng: -76.611)
        #expect(model.roadFactor(from: a, to: b) == model.roadFactor(from: b, to: a))
        let factors = (0..<200).map { i in
            model.roadFactor(from: Coordinate(lat: 39.29 + Double(i) * 0.001, lng: -76.61), to: b)
        }
        #expect(factors.allSatisfy { $0 >= 0.8 && $0 <= 1.2 })
        #expect(Set(factors).count > 150)
        #expect(SpeedModel(seed: 8).roadFactor(from: a, to: b) != model.roadFactor(from: a, to: b))
    }

    @Test(arguments: [(8, 0.8), (17, 0.8), (12, 1.0), (3, 1.1), (23, 1.1), (20, 1.0)])
    func rushHoursAreSlowerAndNightsFaster(hour: Int, factor: Double) {
        #expect(SpeedModel.hourFactor(hour) == factor)
    }

    @Test func speedIsTheRoutersTimesBothFactors() {
        let model = SpeedModel(seed: 1)
        let a = Coordinate(lat: 60.17, lng: 24.94), b = Coordinate(lat: 60.171, lng: 24.941)
        #expect(
            abs(model.speed(router: 10, from: a, to: b, hour: 8) - 10 * model.roadFactor(from: a, to: b) * 0.8) < 1e-12)
    }
}

@Suite struct GPSNoiseTests {
    /// Offsets average out near zero with about the given spread, and a seed replays the same fixes.
    @Test func noiseHasTheGivenSpreadAndReplaysWithTheSeed() {
        let origin = Coordinate(lat: 39.29, lng: -76.61)
        var noise = GPSNoise(sigmaMeters: 5, generator: SeededGenerator(seed: 3))
        let norths = (0..<4000).map { _ in (noise.apply(to: origin).lat - origin.lat) * 111_320 }
        let mean = norths.reduce(0, +) / Double(norths.count)
        let sd = (norths.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(norths.count)).squareRoot()
        #expect(abs(mean) < 0.5)
        #expect(abs(sd - 5) < 0.5)
        var again = GPSNoise(sigmaMeters: 5, generator: SeededGenerator(seed: 3))
        #expect((again.apply(to: origin).lat - origin.lat) * 111_320 == norths[0])
    }
}
