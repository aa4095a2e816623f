import Testing
@testable import Routing

@Suite struct CarProfileNodeAndTurnTests {
    let profile = CarProfile()

    /// Real nodes from the shipped extracts (Helsinki, Monaco, Baltimore, Andorra, Liechtenstein) and their cost.
    @Test(
        arguments: [
            ("n25413711", ["highway": "traffic_signals"], 2.0, false),
            ("n247323550", ["highway": "traffic_signals", "highway:give_way": "yes"], 2, false),
            ("n37358743", ["highway": "stop"], 2, false),
            ("n277401800", ["highway": "give_way"], 1, false),
            (
                "n25413714: a crossing's own lights, as in OSRM",
                ["crossing": "traffic_signals", "highway": "crossing"], 0, false
            ),
            ("plain crossing", ["highway": "crossing", "crossing": "zebra"], 0, false),
            ("n25345637 was:highway", ["was:highway": "traffic_signals"], 0, false),
            ("street lamp", ["highway": "street_lamp"], 0, false),
            ("n3646654152", ["barrier": "gate"], 10, false),
            ("n317703798", ["access": "permissive", "barrier": "gate", "traffic_sign": "FI:342[2,8 m]"], 10, false),
            ("n311113319", ["access": "private", "barrier": "gate"], 0, true),
            ("n323807955", ["access": "private", "barrier": "gate", "bicycle": "no", "foot": "no"], 0, true),
            ("n324919200", ["barrier": "gate", "motorcar": "private"], 0, true),
            ("n409705443", ["access": "no", "barrier": "gate"], 0, true),
            (
                "gate: motorcar=yes beats access=private", ["access": "private", "barrier": "gate", "motorcar": "yes"],
                10, false
            ),
            ("n311040288", ["barrier": "bollard", "bicycle": "yes", "foot": "yes"], 0, true),
            ("removable bollard for cars", ["barrier": "bollard", "motor_vehicle": "yes"], 0, false),
            ("n1922647452", ["barrier": "toll_booth"], 20, false),
            ("cattle grid", ["barrier": "cattle_grid"], 0, false),
            ("barrier=no", ["barrier": "no"], 0, false),
            ("fence", ["barrier": "fence"], 0, true),
            ("cycle barrier", ["barrier": "cycle_barrier"], 0, true),
            ("block", ["barrier": "block"], 0, true),
            ("signals on a gate", ["barrier": "lift_gate", "highway": "traffic_signals"], 12, false),
        ] as [(String, [String: String], Double, Bool)])
    func costsNodesAndBlocksBarriers(label: String, tags: [String: String], seconds: Double, blocks: Bool) {
        #expect(profile.nodeDelay(tags) == CarProfile.NodeDelay(seconds: seconds, blocksCars: blocks), "\(label)")
    }

    @Test(arguments: [
        (0.0, 0.01), (-15, 0.26), (15, 0.02), (45, 0.14), (-45, 1.54), (67.5, 0.655), (90, 2.11), (-90, 7.32),
        (135, 6.67),
        (-135, 9.41), (160, 7.29), (-160, 9.48), (170, 27.5), (180, 27.5), (-180, 27.5), (-175, 27.5), (450, 2.11),
        (-270, 2.11),
    ])
    func costsTurnsByAngleInRightHandTraffic(angle: Double, seconds: Double) {
        #expect(abs(profile.turnCost(angleDegrees: angle) - seconds) < 1e-9)
    }

    @Test func leftHandTrafficSwapsTheSides() {
        #expect(profile.turnCost(angleDegrees: -90, drivingSide: .left) == 2.11)
        #expect(profile.turnCost(angleDegrees: 90, drivingSide: .left) == 7.32)
    }

    @Test func aUTurnCostsTheUTurnPriceWhateverItsAngle() {
        #expect(profile.turnCost(angleDegrees: 30, isUTurn: true) == profile.uTurnSeconds)
        #expect(profile.turnCost(angleDegrees: .nan) == profile.uTurnSeconds)
    }

    /// Sharper turns never cost less, and crossing oncoming traffic never costs less than the kerb-side turn.
    @Test func turnCostGrowsWithSharpnessAndFarSideCostsMore() {
        var previous = (near: 0.0, far: 0.0)
        for degrees in stride(from: 0.0, through: 169.0, by: 1) {
            let near = profile.turnCost(angleDegrees: degrees)
            let far = profile.turnCost(angleDegrees: -degrees)
            #expect(near >= previous.near && far >= previous.far && far >= near, "at \(degrees)°")
            previous = (near, far)
        }
        #expect(previous.far < profile.uTurnSeconds)
    }
}
