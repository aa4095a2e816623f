import OSMPBF
import Testing

/// The reader against the real extracts in `data/osm/`.
@Suite struct OSMReaderExtractTests {
    /// Expected counts, obtained once with osmium-tool 1.15.0 (Debian):
    /// `osmium fileinfo -e -g data.count.nodes|data.count.ways|data.count.relations data/osm/FILE`.
    static let counts: [(file: String, nodes: Int, ways: Int, relations: Int)] = [
        ("Helsinki-raw.osm.pbf", 24_260, 5_130, 620),
        ("Helsinki-clean.osm.pbf", 24_260, 5_069, 620),
        ("kotka-raw.osm.pbf", 14_222, 2_653, 5),
        ("kotka-clean.osm.pbf", 14_222, 2_650, 5),
        ("baltimore.osm.pbf", 51_385, 7_230, 167),
        ("monaco.osm.pbf", 180_118, 27_377, 212),
        ("andorra.osm.pbf", 69_644, 2_725, 74),
        ("liechtenstein.osm.pbf", 142_832, 15_247, 358),
    ]

    @Test(arguments: counts)
    func readsAsManyNodesWaysAndRelationsAsOsmiumCounts(file: String, nodes: Int, ways: Int, relations: Int) throws {
        let reader = try OSMReader(path: OSMExtracts.path(file))
        var counted = (nodes: 0, ways: 0, relations: 0)
        try reader.read(
            nodes: { _ in counted.nodes += 1 }, ways: { _ in counted.ways += 1 },
            relations: { _ in counted.relations += 1 })
        #expect(counted.nodes == nodes)
        #expect(counted.ways == ways)
        #expect(counted.relations == relations)
    }

    /// Entities as `osmium cat -f opl` prints them (coordinates to seven decimals, tags exactly).
    @Test func decodesKnownHelsinkiNodeAndWayExactly() throws {
        let reader = try OSMReader(path: OSMExtracts.path("Helsinki-raw.osm.pbf"))
        var signal: OSMNode?
        var untagged: OSMNode?
        var erottajankatu: OSMWay?
        try reader.read(
            nodes: { node in
                if node.id == 25_291_565 { signal = node }
                if node.id == 25_291_537 { untagged = node }
            },
            ways: { way in
                if way.id == 4_236_349 { erottajankatu = way }
            })
        // n25291565 ... Thighway=traffic_signals x24.9393442 y60.1651349
        #expect(
            signal == OSMNode(id: 25_291_565, lat: 60.1651349, lon: 24.9393442, tags: ["highway": "traffic_signals"]))
        // n25291537 ... T x24.9370245 y60.1643249
        #expect(untagged == OSMNode(id: 25_291_537, lat: 60.1643249, lon: 24.9370245, tags: [:]))
        // w4236349 ... Nn1372477605,n292727220,n2394117042
        #expect(
            erottajankatu
                == OSMWay(
                    id: 4_236_349, refs: [1_372_477_605, 292_727_220, 2_394_117_042],
                    tags: [
                        "lit": "yes", "name": "Erottajankatu", "lanes": "2", "oneway": "yes", "highway": "unclassified",
                        "name:fi": "Erottajankatu", "name:sv": "Skillnadsgatan", "surface": "paved", "maxspeed": "30",
                        "parking:lane:both": "no_stopping", "parking:condition:reason": "junction",
                    ]))
    }

    @Test func decodesAMonacoTurnRestrictionWithItsMembersAndRoles() throws {
        let reader = try OSMReader(path: OSMExtracts.path("monaco.osm.pbf"))
        var restriction: OSMRelation?
        var last: OSMNode?
        try reader.read(nodes: { last = $0 }, relations: { if $0.id == 3_410_831 { restriction = $0 } })
        // r3410831 ... Ttype=restriction,restriction=only_straight_on Mw92627431@from,w254596488@to,n273244852@via
        #expect(
            restriction
                == OSMRelation(
                    id: 3_410_831,
                    members: [
                        OSMMember(type: .way, ref: 92_627_431, role: "from"),
                        OSMMember(type: .way, ref: 254_596_488, role: "to"),
                        OSMMember(type: .node, ref: 273_244_852, role: "via"),
                    ], tags: ["type": "restriction", "restriction": "only_straight_on"]))
        // The file's last node: n4035273179 ... T x7.3628142 y43.7250224
        #expect(last == OSMNode(id: 4_035_273_179, lat: 43.7250224, lon: 7.3628142))
    }

    @Test func decodesANegativeLongitudeAndEscapedTagValues() throws {
        let reader = try OSMReader(path: OSMExtracts.path("baltimore.osm.pbf"))
        var booth: OSMNode?
        try reader.read(nodes: { if $0.id == 27_033_898 { booth = $0 } })
        // n27033898 ... Tbarrier=toll_booth,exit_to=Keith%20%Ave,highway=motorway_junction,ref=56 x-76.5619563
        // y39.2661852
        #expect(
            booth
                == OSMNode(
                    id: 27_033_898, lat: 39.2661852, lon: -76.5619563,
                    tags: [
                        "barrier": "toll_booth", "exit_to": "Keith Ave", "highway": "motorway_junction", "ref": "56",
                    ]))
    }

    /// `osmium fileinfo -g header.boxes`: (24.9351762,60.164155,24.9534145,60.179113) for Helsinki-raw; none for
    /// Helsinki-clean.
    /// osmium prints the box cut to 1e-7 degrees; the file holds nanodegrees (24.935176299...), hence the tolerance.
    @Test func readsTheHeaderBoundingBoxAndFeatures() throws {
        let raw = try OSMReader(path: OSMExtracts.path("Helsinki-raw.osm.pbf"))
        let box = try #require(raw.boundingBox)
        #expect(abs(box.minLat - 60.164155) < 1e-7 && abs(box.maxLat - 60.179113) < 1e-7)
        #expect(abs(box.minLon - 24.9351762) < 1e-7 && abs(box.maxLon - 24.9534145) < 1e-7)
        #expect(raw.header.requiredFeatures.contains("DenseNodes"))
        let monaco = try OSMReader(path: OSMExtracts.path("monaco.osm.pbf"))
        #expect(monaco.header.boundingBox == OSMBoundingBox(minLat: 43.71, minLon: 7.349, maxLat: 43.77, maxLon: 7.491))
        let clean = try OSMReader(path: OSMExtracts.path("Helsinki-clean.osm.pbf"))
        #expect(clean.header.boundingBox == nil)
    }

    /// Only the kinds with a callback are visited; the others are stepped over.
    @Test func visitsOnlyTheKindsAskedFor() throws {
        let reader = try OSMReader(path: OSMExtracts.path("kotka-raw.osm.pbf"))
        var ways = 0
        try reader.read(ways: { _ in ways += 1 })
        #expect(ways == 2_653)
    }

    /// A callback's error stops the read and reaches the caller unchanged.
    @Test func rethrowsTheCallbacksError() throws {
        struct Stop: Error {}
        let reader = try OSMReader(path: OSMExtracts.path("kotka-raw.osm.pbf"))
        var seen = 0
        #expect(throws: Stop.self) {
            try reader.read(nodes: { _ in
                seen += 1
                if seen == 10 { throw Stop() }
            })
        }
        #expect(seen == 10)
    }
}
