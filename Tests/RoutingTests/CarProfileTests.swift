import Testing
@testable import Routing

/// A way's tags and what the car profile should make of them (nil: a car may not use it).
struct WayCase: CustomTestStringConvertible, Sendable {
    let label: String
    let tags: [String: String]
    let expected: WayAttributes?
    var testDescription: String { label }
}

private func attributes(
    _ roadClass: RoadClass, forward: Bool = true, backward: Bool = true, speed: Double,
    backwardSpeed: Double? = nil, source: WayAttributes.SpeedSource, name: String? = nil,
    ref: String? = nil, roundabout: Bool = false, destinationOnly: (Bool, Bool) = (false, false)
) -> WayAttributes {
    WayAttributes(
        roadClass: roadClass, forward: forward, backward: backward, forwardSpeedKmh: speed,
        backwardSpeedKmh: backwardSpeed ?? speed, speedSource: source, name: name ?? ref, ref: ref,
        isRoundabout: roundabout,
        forwardDestinationOnly: forward && destinationOnly.0, backwardDestinationOnly: backward && destinationOnly.1)
}

private let mph = 1.609344

/// Real ways from the shipped extracts (`osmium cat -f opl`), tags decoded, irrelevant ones (source, surface,
/// lanes, tiger:*, parking:*) dropped.
let realWays: [WayCase] = [
    WayCase(
        label: "Andorra w6182386 residential oneway=-1",
        tags: ["highway": "residential", "name": "Carrer Pau Casals", "oneway": "-1", "source": "survey"],
        expected: attributes(.residential, forward: false, speed: 25, source: .classTable, name: "Carrer Pau Casals")),
    WayCase(
        label: "Andorra w6166136 roundabout, maxspeed 50, ref only",
        tags: [
            "access": "yes", "bicycle": "yes", "foot": "no", "highway": "primary", "junction": "roundabout",
            "maxspeed": "50",
            "motor_vehicle": "yes", "oneway": "yes", "ref": "CG-2", "surface": "asphalt",
        ],
        expected: attributes(.primary, backward: false, speed: 40, source: .posted, ref: "CG-2", roundabout: true)),
    WayCase(
        label: "Andorra w6195885 roundabout without oneway is one-way",
        tags: ["created_by": "Potlatch 0.8a", "highway": "primary", "junction": "roundabout"],
        expected: attributes(.primary, backward: false, speed: 65, source: .classTable, roundabout: true)),
    WayCase(
        label: "Baltimore w4416443 I 95, 55 mph",
        tags: [
            "access_control": "full", "bicycle": "no", "foot": "no", "hgv": "designated", "highway": "motorway",
            "lanes": "8",
            "maxspeed": "55 mph", "oneway": "yes", "ref": "I 95", "toll": "yes",
        ],
        expected: attributes(.motorway, backward: false, speed: 55 * mph * 0.8, source: .posted, ref: "I 95")),
    WayCase(
        label: "Baltimore w5295930 motorway_link, class speed",
        tags: ["bridge": "yes", "highway": "motorway_link", "lanes": "1", "layer": "2", "oneway": "yes"],
        expected: attributes(.motorwayLink, backward: false, speed: 45, source: .classTable)),
    WayCase(
        label: "Baltimore w5300589 Holabird Avenue, 25 mph one-way",
        tags: [
            "highway": "secondary", "maxspeed": "25 mph", "name": "Holabird Avenue", "oneway": "yes",
            "postal_code": "21224",
        ],
        expected: attributes(
            .secondary, backward: false, speed: 25 * mph * 0.8, source: .posted, name: "Holabird Avenue")),
    WayCase(
        label: "Baltimore w49639203 trunk one-way",
        tags: [
            "cycleway": "lane", "highway": "trunk", "lanes": "3", "name": "South President Street", "oneway": "yes",
            "oneway:bicycle": "yes",
        ],
        expected: attributes(.trunk, backward: false, speed: 85, source: .classTable, name: "South President Street")),
    WayCase(
        label: "Baltimore w142712534 access=no driveway",
        tags: [
            "access": "no", "highway": "service", "maxspeed": "5 mph", "name": "Harbor Magic Drive", "oneway": "yes",
            "service": "driveway",
        ],
        expected: nil),
    WayCase(
        label: "Andorra w61736208 maxspeed 90;30;... takes the lowest",
        tags: ["highway": "primary", "maxspeed": "90;30;90;30;90;30", "name": "Port d'Envalira", "ref": "CG-2"],
        expected: attributes(.primary, speed: 24, source: .posted, name: "Port d'Envalira", ref: "CG-2")),
    WayCase(
        label: "Andorra w199039742 living street",
        tags: ["foot": "designated", "highway": "living_street", "name": "Carrer d'Engordany"],
        expected: attributes(.livingStreet, speed: 10, source: .classTable, name: "Carrer d'Engordany")),
    WayCase(
        label: "Andorra w6182714 track with motor_vehicle=yes is not a car class",
        tags: ["access": "yes", "highway": "track", "maxspeed": "50", "motor_vehicle": "yes", "oneway": "no"],
        expected: nil),
    WayCase(
        label: "Helsinki w27558515 parking aisle",
        tags: ["highway": "service", "service": "parking_aisle", "surface": "paving_stones"],
        expected: attributes(.service, speed: 5, source: .classTable)),
    WayCase(
        label: "Helsinki w28634245 driveway",
        tags: ["highway": "service", "service": "driveway", "surface": "paved"],
        expected: attributes(.service, speed: 8, source: .classTable)),
    WayCase(
        label: "Helsinki w128566064 highway=construction",
        tags: ["construction": "cycleway", "foot": "designated", "highway": "construction", "lit": "yes"],
        expected: nil),
    WayCase(
        label: "Helsinki w35144170 service area",
        tags: ["area": "yes", "highway": "service", "surface": "paved"],
        expected: nil),
    WayCase(
        label: "Helsinki w27559013 Salomonkatu motorcar=no",
        tags: ["lit": "yes", "psv": "yes", "name": "Salomonkatu", "highway": "service", "motorcar": "no"],
        expected: nil),
    WayCase(
        label: "Helsinki w14601899 Aleksanterinkatu oneway:motor_vehicle=yes and motor_vehicle:forward=no",
        tags: [
            "bicycle": "yes", "highway": "service", "maxspeed": "20", "motor_vehicle:forward": "no",
            "name": "Aleksanterinkatu",
            "oneway:motor_vehicle": "yes", "taxi:forward": "yes",
        ],
        expected: nil),
    WayCase(
        label: "Helsinki w317000782 Annankatu maxspeed:forward=40",
        tags: [
            "highway": "residential", "name": "Annankatu", "maxspeed": "30", "maxspeed:forward": "40",
            "hazmat:A:forward": "destination",
        ],
        expected: attributes(.residential, speed: 32, backwardSpeed: 24, source: .posted, name: "Annankatu")),
    WayCase(
        label: "Helsinki w27193233 access=destination tunnel",
        tags: [
            "access": "destination", "highway": "service", "layer": "-3", "maxheight": "4", "maxspeed": "10",
            "oneway": "yes",
            "tunnel": "yes",
        ],
        expected: attributes(.service, backward: false, speed: 8, source: .posted, destinationOnly: (true, true))),
    WayCase(
        label: "Helsinki w29050024 maxspeed 5 floors at the minimum speed",
        tags: [
            "access": "destination", "bicycle": "no", "foot": "no", "highway": "service", "maxspeed": "5",
            "tunnel": "yes",
        ],
        expected: attributes(.service, speed: 5, source: .posted, destinationOnly: (true, true))),
    WayCase(
        label: "Helsinki w27327788 access=private",
        tags: ["access": "private", "highway": "service"], expected: nil),
    WayCase(
        label: "Helsinki w8061216 access=no psv=yes",
        tags: ["psv": "yes", "lanes": "2", "access": "no", "highway": "service", "tram:lanes:forward": "yes"],
        expected: nil),
    WayCase(
        label: "Helsinki w4243035 Korkeavuorenkatu",
        tags: [
            "highway": "unclassified", "lanes": "2", "lit": "yes", "maxspeed": "30", "name": "Korkeavuorenkatu",
            "name:sv": "Högbergsgatan",
        ],
        expected: attributes(.unclassified, speed: 24, source: .posted, name: "Korkeavuorenkatu")),
    WayCase(
        label: "Helsinki w60753077 Fabianinkatu zone:traffic is not a limit",
        tags: ["highway": "residential", "name": "Fabianinkatu", "maxspeed": "30", "zone:traffic": "FI:urban"],
        expected: attributes(.residential, speed: 24, source: .posted, name: "Fabianinkatu")),
]

/// Access and one-way precedence on a residential street (class speed 25 km/h); nil: not for cars.
let precedenceCases: [WayCase] =
    ([
        ("motor_vehicle=yes beats access=no", ["access": "no", "motor_vehicle": "yes"], (true, true)),
        ("motor_vehicle=no beats access=yes", ["access": "yes", "motor_vehicle": "no"], nil),
        ("motorcar=yes beats vehicle=no", ["vehicle": "no", "motorcar": "yes"], (true, true)),
        (
            "motorcar=destination beats motor_vehicle=private",
            ["motor_vehicle": "private", "motorcar": "destination"], (true, true)
        ),
        (
            "motorcar=yes beats motor_vehicle=no and access=no",
            ["access": "no", "motor_vehicle": "no", "motorcar": "yes"], (true, true)
        ),
        (
            "an unknown motorcar value falls through to motor_vehicle=no",
            ["motorcar": "unknown", "motor_vehicle": "no"], nil
        ),
        ("vehicle=no beats access=yes", ["access": "yes", "vehicle": "no"], nil),
        ("access=agricultural", ["access": "agricultural"], nil),
        ("access=forestry", ["access": "forestry"], nil),
        ("motor_vehicle=agricultural;forestry", ["motor_vehicle": "agricultural;forestry"], nil),
        ("access=delivery", ["access": "delivery"], nil),
        ("motor_vehicle=private", ["motor_vehicle": "private"], nil),
        ("access=customers", ["access": "customers"], (true, true)),
        ("access=destination", ["access": "destination"], (true, true)),
        ("access=residents", ["access": "residents"], (true, true)),
        ("motorcar=yes beats access=destination", ["access": "destination", "motorcar": "yes"], (true, true)),
        (
            "motor_vehicle:forward=destination beats motor_vehicle=yes",
            ["motor_vehicle": "yes", "motor_vehicle:forward": "destination"],
            (true, true)
        ),
        ("motor_vehicle:backward=no", ["motor_vehicle:backward": "no"], (true, false)),
        (
            "motorcar=yes beats motor_vehicle:forward=no", ["motor_vehicle:forward": "no", "motorcar": "yes"],
            (true, true)
        ),
        ("oneway=yes", ["oneway": "yes"], (true, false)),
        ("oneway=1", ["oneway": "1"], (true, false)),
        ("oneway=true", ["oneway": "true"], (true, false)),
        ("oneway=-1", ["oneway": "-1"], (false, true)),
        ("oneway=reversible", ["oneway": "reversible"], nil),
        ("oneway:motor_vehicle=no beats oneway=yes", ["oneway": "yes", "oneway:motor_vehicle": "no"], (true, true)),
        ("oneway:motor_vehicle=-1 beats oneway=no", ["oneway": "no", "oneway:motor_vehicle": "-1"], (false, true)),
        ("junction=circular implies one-way", ["junction": "circular"], (true, false)),
        ("oneway=no on a roundabout", ["junction": "roundabout", "oneway": "no"], (true, true)),
        (
            "oneway=-1 with motor_vehicle:backward=no leaves nothing",
            ["oneway": "-1", "motor_vehicle:backward": "no"], nil
        ),
        ("impassable=yes", ["impassable": "yes"], nil),
        ("smoothness=impassable", ["smoothness": "impassable"], nil),
        ("construction=yes on a residential", ["construction": "yes"], nil),
        ("construction=minor stays open", ["construction": "minor"], (true, true)),
        ("proposed=primary", ["proposed": "primary"], nil),
        ("area=yes", ["area": "yes"], nil),
    ] as [(String, [String: String], (Bool, Bool)?)]).map { label, extra, directions in
        let tags = extra.merging(["highway": "residential"]) { a, _ in a }
        // Where the deciding value lets a car in only to reach somewhere on the way, by direction.
        let destinationOnly: [String: (Bool, Bool)] = [
            "motorcar=destination beats motor_vehicle=private": (true, true), "access=customers": (true, true),
            "access=destination": (true, true), "access=residents": (true, true),
            "motor_vehicle:forward=destination beats motor_vehicle=yes": (true, false),
        ]
        let expected = directions.map {
            attributes(
                .residential, forward: $0.0, backward: $0.1, speed: 25, source: .classTable,
                roundabout: extra["junction"] != nil,
                destinationOnly: destinationOnly[label] ?? (false, false))
        }
        return WayCase(label: label, tags: tags, expected: expected)
    }

/// Every `maxspeed` format the profile reads, and its posted limit in km/h.
let maxspeedFormats: [(String, Double)] = [
    ("50", 50.0), ("120", 120), ("50 km/h", 50), ("50kmh", 50), ("60 kph", 60), ("50 mph", 50 * mph),
    ("50mph", 50 * mph),
    ("25 mph", 25 * mph), ("10 knots", 18.52), ("7.5", 7.5),
    ("FI:urban", 50), ("FI:rural", 80), ("FI:motorway", 120), ("FI:living_street", 20), ("fi:urban", 50),
    ("US:urban", 25 * mph), ("US:rural", 55 * mph), ("US:motorway", 65 * mph),
    ("DE:urban", 50), ("DE:rural", 100), ("DE:motorway", 130), ("DE:zone30", 30), ("DE:zone:30", 30), ("DE:30", 30),
    ("DE:living_street", 7), ("FR:urban", 50), ("FR:rural", 80), ("FR:motorway", 130), ("FR:zone30", 30),
    ("GB:nsl_single", 60 * mph), ("GB:nsl_dual", 70 * mph), ("GB:motorway", 70 * mph), ("GB:nsl_restricted", 30 * mph),
    ("MC:urban", 50), ("AD:urban", 50), ("AD:rural", 90), ("LI:urban", 50), ("LI:rural", 80),
    ("none", 130), ("walk", 7), ("50;30", 30), ("90;30;90;30;90;30", 30), ("30 mph;40", 40), ("FI:urban;30", 30),
    ("50; 30", 30), ("signals;50", 50),
]

@Suite struct CarProfileTests {
    let profile = CarProfile()

    @Test(arguments: realWays)
    func readsRealWaysFromTheShippedExtracts(_ c: WayCase) {
        #expect(profile.way(c.tags) == c.expected)
    }

    @Test(arguments: precedenceCases)
    func mostSpecificAccessAndOnewayKeyWins(_ c: WayCase) {
        #expect(profile.way(c.tags) == c.expected)
    }

    @Test func motorwayIsImpliedOnewayUnlessTaggedOtherwise() throws {
        let implied = try #require(profile.way(["highway": "motorway"]))
        #expect(implied.forward && !implied.backward)
        let twoWay = try #require(profile.way(["highway": "motorway", "oneway": "no"]))
        #expect(twoWay.forward && twoWay.backward)
    }

    @Test(arguments: [
        "track", "path", "footway", "cycleway", "pedestrian", "steps", "bus_guideway", "road", "proposed", "raceway",
    ])
    func nonCarHighwayClassesAreNotRoutable(highway: String) {
        #expect(profile.way(["highway": highway]) == nil)
    }

    @Test func emergencyAccessServiceRoadIsNotRoutable() {
        #expect(profile.way(["highway": "service", "service": "emergency_access"]) == nil)
    }

    @Test func everyClassHasATableSpeedAndNameFallsBackToRef() throws {
        for roadClass in RoadClass.allCases {
            let way = try #require(profile.way(["highway": roadClass.highwayValue, "oneway": "no"]))
            #expect(way.forwardSpeedKmh == profile.classSpeedKmh[roadClass])
            #expect(way.speedSource == .classTable)
        }
        #expect(profile.way(["highway": "primary", "ref": "7"])?.name == "7")
        #expect(profile.way(["highway": "primary", "ref": "7", "name": "Mannerheimintie"])?.name == "Mannerheimintie")
        #expect(profile.way(["highway": "primary", "name": ""])?.name == nil)
    }

    @Test func unreadableMaxspeedFallsBackToTheClassTable() throws {
        let way = try #require(profile.way(["highway": "residential", "maxspeed": "signals"]))
        #expect(way.forwardSpeedKmh == 25)
        #expect(way.speedSource == .classTable)
    }

    @Test func implicitLimitInMaxspeedTypeOrSourceIsUsedWithoutMaxspeed() throws {
        #expect(profile.way(["highway": "residential", "source:maxspeed": "DE:urban"])?.forwardSpeedKmh == 40)
        #expect(profile.way(["highway": "primary", "maxspeed:type": "FI:rural"])?.forwardSpeedKmh == 64)
        #expect(profile.way(["highway": "residential", "zone:maxspeed": "DE:30"])?.forwardSpeedKmh == 24)
        // `source:maxspeed=sign` says where the number came from, not a number.
        #expect(profile.way(["highway": "residential", "source:maxspeed": "sign"])?.speedSource == .classTable)
    }

    @Test(arguments: maxspeedFormats)
    func readsEveryMaxspeedFormat(value: String, kmh: Double) throws {
        let limit = try #require(profile.postedLimitKmh(value))
        #expect(abs(limit - kmh) < 1e-9)
    }

    @Test(arguments: [
        "", "fast", "signals", "variable", "-5", "0", "50 furlongs", "XX:urban", "FI:", "mph", ";", "implicit",
    ])
    func refusesUnreadableMaxspeeds(value: String) {
        #expect(profile.postedLimitKmh(value) == nil)
    }

    @Test func postedSpeedsGetTheFreeFlowFactor() throws {
        let way = try #require(profile.way(["highway": "primary", "maxspeed": "100"]))
        #expect(way.forwardSpeedKmh == 100 * profile.postedSpeedFactor)
        #expect(profile.way(["highway": "motorway", "maxspeed": "none"])?.forwardSpeedKmh == 130 * 0.8)
        #expect(profile.way(["highway": "living_street", "maxspeed": "walk"])?.forwardSpeedKmh == 7 * 0.8)
    }
}
