import EnRouteModels
import Testing
import EnRouteDomain
import TestSupport

@Suite struct HexGridTests {
    let grid = HexGrid()

    /// Metres between two points (haversine).
    func metres(_ a: Coordinate, _ b: Coordinate) -> Double { StraightLineEstimator.distance(a, b) }

    static let places: [(String, Coordinate)] = [
        ("Helsinki", Coordinate(lat: 60.1699, lng: 24.9384)),
        ("Baltimore", Coordinate(lat: 39.2904, lng: -76.6122)),
        ("Quito, near the equator", Coordinate(lat: -0.1807, lng: -78.4678)),
        ("Sydney, south of it", Coordinate(lat: -33.8688, lng: 151.2093)),
        ("near the antimeridian", Coordinate(lat: -17.7134, lng: 178.065)),
    ]

    @Test(arguments: places)
    func aPointLiesWithinHalfAZoneOfItsCellsCentre(_ place: (String, Coordinate)) {
        let cell = grid.cell(of: place.1)
        // A pointy-topped hexagon's corners are across/√3 from its centre.
        #expect(metres(place.1, grid.centre(of: cell)) <= 1_000 / 3.0.squareRoot() * 1.01)
        #expect(grid.cell(of: grid.centre(of: cell)) == cell)
    }

    @Test(arguments: places)
    func neighboursAreAZoneApartAndDistinct(_ place: (String, Coordinate)) {
        let cell = grid.cell(of: place.1)
        let neighbours = grid.neighbours(of: cell)
        #expect(Set(neighbours).count == 6 && !neighbours.contains(cell))
        for next in neighbours {
            let d = metres(grid.centre(of: cell), grid.centre(of: next))
            #expect(abs(d - 1_000) < 15, "\(place.0): \(next) is \(d) m away")
        }
    }

    @Test func nearbyPointsShareACellAndFarOnesDoNot() {
        let centre = grid.centre(of: grid.cell(of: Coordinate(lat: 60.1699, lng: 24.9384)))
        let near = Coordinate(lat: centre.lat + 100 / 110_574, lng: centre.lng)
        let far = Coordinate(lat: centre.lat + 1_500 / 110_574, lng: centre.lng)
        #expect(grid.cell(of: near) == grid.cell(of: centre))
        #expect(grid.cell(of: far) != grid.cell(of: centre))
    }

    @Test func everyPointOfAnAreaFallsInExactlyTheCellWhoseCentreIsNearest() {
        // Hexagons tile the plane: the cell of a point is the one with the nearest centre.
        var random = SeededRandom(seed: 3)
        for _ in 0..<500 {
            let point = Coordinate(
                lat: 60.1 + Double(random.next() % 10_000) / 100_000,
                lng: 24.8 + Double(random.next() % 10_000) / 50_000)
            let cell = grid.cell(of: point)
            let own = metres(point, grid.centre(of: cell))
            for next in grid.neighbours(of: cell) { #expect(own <= metres(point, grid.centre(of: next)) + 1) }
        }
    }

    @Test func aCellIsNamedByBandAndAxialCoordinates() {
        #expect(HexCell(band: 60, q: -3, r: 7).description == "60/-3/7")
        #expect(grid.cell(of: Coordinate(lat: 60.1699, lng: 24.9384)).band == 60)
        #expect(grid.cell(of: Coordinate(lat: -33.8688, lng: 151.2093)).band == -34)
    }
}

@Suite struct ZoneDemandTests {
    static let pickup = Coordinate(lat: 60.1699, lng: 24.9384)
    static let elsewhere = Coordinate(lat: 60.2, lng: 25.0)

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        /// Each minute's open requests and idle providers at the pickup.
        let minutes: [(open: Int, idle: Int)]
        let weight: Double
        let expected: ZoneDemand.Figures
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "the first sample is taken whole", minutes: [(4, 2)], weight: 0.3, expected: .init(open: 4, idle: 2)),
        Case(
            name: "a burst moves the figures by the weight", minutes: [(0, 2), (10, 2)], weight: 0.3,
            expected: .init(open: 3, idle: 2)),
        Case(
            name: "a burst fades minute by minute", minutes: [(10, 2), (0, 2), (0, 2)], weight: 0.5,
            expected: .init(open: 2.5, idle: 2)),
        Case(
            name: "a steady level is kept", minutes: [(3, 1), (3, 1), (3, 1), (3, 1)], weight: 0.3,
            expected: .init(open: 3, idle: 1)),
        Case(
            name: "weight 1 keeps only the newest minute", minutes: [(9, 9), (1, 0)], weight: 1,
            expected: .init(open: 1, idle: 0)),
    ]

    @Test(arguments: cases)
    func samplesAreSmoothedOverMinutes(_ c: Case) {
        var zones = ZoneDemand(weight: c.weight)
        for minute in c.minutes {
            zones.record(
                open: Array(repeating: Self.pickup, count: minute.open),
                idle: Array(repeating: Self.pickup, count: minute.idle))
        }
        let figures = zones.figures(at: Self.pickup).figures
        #expect(abs(figures.open - c.expected.open) < 1e-9 && abs(figures.idle - c.expected.idle) < 1e-9)
    }

    @Test func eachZoneIsCountedOnItsOwn() {
        var zones = ZoneDemand()
        zones.record(open: [Self.pickup, Self.pickup], idle: [Self.elsewhere])
        #expect(zones.figures(at: Self.pickup).figures == .init(open: 2, idle: 0))
        #expect(zones.figures(at: Self.elsewhere).figures == .init(open: 0, idle: 1))
        #expect(zones.figures(at: Self.pickup).zone != zones.figures(at: Self.elsewhere).zone)
    }

    @Test func aZoneThatEmptiedIsForgotten() {
        var zones = ZoneDemand(weight: 1)
        zones.record(open: [Self.pickup], idle: [])
        zones.record(open: [], idle: [])
        #expect(zones.zones.isEmpty)
    }

    @Test func theMultiplierFollowsTheSmoothedRatioAndIsCapped() {
        let rule = DemandRule()
        #expect(rule.multiplier(open: 0.0, online: 0.0) == 1)
        #expect(rule.multiplier(open: 3.0, online: 2.0) == 1.2)
        #expect(rule.multiplier(open: 50.0, online: 1.0) == rule.cap)
        #expect(rule.multiplier(open: 3, online: 2) == rule.multiplier(open: 3.0, online: 2.0))
    }
}
