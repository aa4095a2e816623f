import Foundation
import Testing
@testable import RoadBuilder
@testable import Routing
import TestSupport

/// The graph file: a built network survives the round trip exactly, and every kind of damage is a named error.
@Suite struct RoadGraphFileTests {
    static let metadata = RoadGraphFile.Metadata(build: ["source": "Helsinki-clean.osm.pbf", "builder": "tests"])

    static func helsinkiBytes() async throws -> (RoadNetwork, [UInt8]) {
        let network = try await Extracts.built("Helsinki-clean.osm.pbf").network
        return (network, RoadGraphFile.encode(network, metadata: metadata))
    }

    static func decode(_ bytes: [UInt8]) throws(RoadGraphFileError) -> RoadGraphFile.Contents {
        do {
            return try bytes.withUnsafeBytes { try RoadGraphFile.decode($0) }
        } catch let error as RoadGraphFileError { throw error } catch { fatalError("untyped \(error)") }
    }

    /// The error decoding `bytes` throws, or nil when it decodes.
    static func error(_ bytes: [UInt8]) -> RoadGraphFileError? {
        do { _ = try decode(bytes); return nil } catch { return error }
    }

    /// (tag, offset, length) of each section in the table.
    static func sections(_ bytes: [UInt8]) -> [(tag: String, offset: Int, length: Int)] {
        bytes.withUnsafeBytes { raw in
            (0..<Int(raw.u32(at: 12))).map { index in
                let entry = 32 + 32 * index
                return (
                    RoadGraphFile.tagText(raw.u32(at: entry)), Int(raw.u64(at: entry + 8)), Int(raw.u64(at: entry + 16))
                )
            }
        }
    }

    @Test func aStoredHierarchyLoadsWithEveryArrayEqualAndNoContraction() async throws {
        let network = try await Extracts.built("Helsinki-clean.osm.pbf").network
        let (graph, hierarchy) = try await offThePool { () -> (EdgeBasedGraph, ContractionHierarchy) in
            let graph = EdgeBasedGraph(network: network)
            return (graph, ContractionHierarchy(graph: graph))
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-\(UUID().uuidString).graph")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try RoadGraphFile.write(network, metadata: Self.metadata, routing: (graph, hierarchy), to: path)
        var logged: [String] = []
        let loaded = try RoadGraphFile.load(path, log: { logged.append($0) })
        #expect(loaded.hierarchyWasStored && logged.isEmpty)
        let g = loaded.graph, h = loaded.hierarchy
        #expect(g.nodeCount == graph.nodeCount && g.edgeWeight == graph.edgeWeight && g.edgeLength == graph.edgeLength)
        #expect(
            g.firstArc == graph.firstArc && g.arcHead == graph.arcHead && g.arcWeight == graph.arcWeight
                && g.arcLength == graph.arcLength)
        #expect(g.nodeFirstDeparture == graph.nodeFirstDeparture && g.nodeDepartures == graph.nodeDepartures)
        #expect(g.nodeFirstArrival == graph.nodeFirstArrival && g.nodeArrivals == graph.nodeArrivals)
        #expect(h.rank == hierarchy.rank && h.shortcutCount == hierarchy.shortcutCount && h.shortcutCount > 0)
        #expect(h.arcFirst == hierarchy.arcFirst && h.arcs == hierarchy.arcs && h.upArcCount == hierarchy.upArcCount)
    }

    @Test func aFileWithoutAHierarchyStillLoadsAndBuildsItWithALogLine() async throws {
        let network = try await Extracts.built("kotka-clean.osm.pbf").network
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-\(UUID().uuidString).graph")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try RoadGraphFile.write(network, to: path)
        let loaded = try await offThePool { () -> (RoadGraphFile.Loaded, [String]) in
            var logged: [String] = []
            return (try RoadGraphFile.load(path, log: { logged.append($0) }), logged)
        }
        #expect(!loaded.0.hierarchyWasStored)
        #expect(loaded.1.count == 1 && loaded.1[0].contains("no stored contraction hierarchy"))
        #expect(loaded.0.hierarchy.nodeCount == network.edgeCount && loaded.0.graph.nodeCount == network.edgeCount)
    }

    @Test func aHierarchyWithoutItsTurnGraphOrWithABadRankIsANamedError() async throws {
        let network = RoadNetwork.randomGrid(rows: 6, columns: 6, seed: 3)
        let graph = EdgeBasedGraph(network: network)
        let hierarchy = ContractionHierarchy(graph: graph)
        let bytes = RoadGraphFile.encode(network, routing: (graph, hierarchy))
        #expect(Self.error(bytes) == nil)
        // Drop the TURN section's table entry by re-assembling without it.
        let sections = Self.sections(bytes)
        func tagged(_ keep: (String) -> Bool, edit: (String, inout [UInt8]) -> Void = { _, _ in }) -> [UInt8] {
            let parts = sections.filter { keep($0.tag) }.map { section -> (tag: UInt32, bytes: [UInt8]) in
                var body = Array(bytes[section.offset..<section.offset + section.length])
                edit(section.tag, &body)
                let tag = Array(section.tag.utf8).enumerated().reduce(UInt32(0)) {
                    $0 | UInt32($1.element) << (8 * UInt32($1.offset))
                }
                return (tag, body)
            }
            return RoadGraphFile.assemble(parts)
        }
        #expect(Self.error(tagged { $0 != "TURN" }) == .missingSection("turn graph"))
        #expect(Self.error(tagged { $0 != "CHIE" }) == .missingSection("contraction hierarchy"))
        #expect(Self.error(tagged { $0 != "CHIE" && $0 != "TURN" }) == nil)
        // Node 1's rank set equal to node 0's: not a permutation.
        let repeated = tagged({ _ in true }) { tag, body in
            guard tag == "CHIE" else { return }
            body.replaceSubrange(36..<40, with: body[32..<36])
        }
        guard case let .invalid(section, detail) = Self.error(repeated) else { Issue.record("no error"); return }
        #expect(section == "contraction hierarchy" && detail.contains("rank"))
    }

    @Test func helsinkiRoundTripsThroughAFileWithEveryArrayEqual() async throws {
        let network = try await Extracts.built("Helsinki-clean.osm.pbf").network
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-\(UUID().uuidString).graph")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try RoadGraphFile.write(network, metadata: Self.metadata, to: path)
        let contents = try RoadGraphFile.readContents(path)
        let read = contents.network
        #expect(read.nodeCount == network.nodeCount && read.edgeCount == network.edgeCount && network.edgeCount > 1000)
        #expect(read.nodeIDs == network.nodeIDs)
        #expect(read.nodeLats == network.nodeLats && read.nodeLons == network.nodeLons)
        #expect(read.nodeDelaySeconds == network.nodeDelaySeconds)
        #expect(read.edgeFrom == network.edgeFrom && read.edgeTo == network.edgeTo)
        #expect(
            read.edgeLengthMeters == network.edgeLengthMeters && read.edgeDurationSeconds == network.edgeDurationSeconds
        )
        #expect(read.edgeRoadClass == network.edgeRoadClass && read.edgeNameIndex == network.edgeNameIndex)
        #expect(read.geometryStart == network.geometryStart)
        #expect(read.geometryLats == network.geometryLats && read.geometryLons == network.geometryLons)
        #expect(read.names == network.names && network.names.count > 10)
        #expect(read.restrictions == network.restrictions && !network.restrictions.isEmpty)
        #expect(contents.metadata == Self.metadata)
        for angle in stride(from: -180.0, through: 180, by: 2.5) {
            #expect(
                read.turnCosts.seconds(angleDegrees: angle, isUTurn: false)
                    == network.turnCosts.seconds(angleDegrees: angle, isUTurn: false))
        }
        #expect(read.turnCosts.uTurnSeconds == network.turnCosts.uTurnSeconds)
        // The interned names still resolve: an edge's name reads back the same.
        #expect((0..<Int32(network.edgeCount)).allSatisfy { read.name(ofEdge: $0) == network.name(ofEdge: $0) })
    }

    @Test func writingReplacesTheFileAtomicallyAndLeavesNoTemporaryFile() async throws {
        var network = RoadNetwork()
        let a = network.addNode(id: 1, lat: 60.1, lon: 24.9), b = network.addNode(id: 2, lat: 60.2, lon: 24.9)
        network.addEdge(from: a, to: b, durationSeconds: 10, name: "Mannerheimintie")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("small.graph").path
        try Data("an older file".utf8).write(to: URL(fileURLWithPath: path))
        try RoadGraphFile.write(network, to: path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["small.graph"])
        #expect(try RoadGraphFile.read(path).name(ofEdge: 0) == "Mannerheimintie")
    }

    @Test func everyTruncationIsATruncatedErrorNotACrash() async throws {
        let (_, bytes) = try await Self.helsinkiBytes()
        for length in [0, 5, 11, 20, 31, 40, 100, 1000, bytes.count / 2, bytes.count - 1] {
            let error = Self.error(Array(bytes[0..<length]))
            guard case .truncated = error else {
                Issue.record("\(length) bytes gave \(String(describing: error))"); continue
            }
        }
        #expect(
            Self.error(Array(bytes[0..<bytes.count - 1]))
                == .truncated(
                    section: "file", detail: "the file is \(bytes.count - 1) bytes, its header says \(bytes.count)"))
    }

    @Test func aFlippedByteInEachSectionNamesThatSection() async throws {
        let (_, bytes) = try await Self.helsinkiBytes()
        let names = [
            "META": "metadata", "NODE": "nodes", "EDGE": "edges", "GEOM": "geometry", "NAME": "names",
            "REST": "restrictions",
            "ACCS": "edge access",
        ]
        let sections = Self.sections(bytes)
        #expect(Set(sections.map(\.tag)) == Set(names.keys))
        for section in sections {
            for position in [section.offset, section.offset + section.length / 2, section.offset + section.length - 1] {
                var damaged = bytes
                damaged[position] ^= 0x10
                #expect(
                    Self.error(damaged) == .checksumMismatch(section: names[section.tag]!),
                    "byte \(position) of \(section.tag)")
            }
        }
        // The header and the section table are checksummed too.
        for (position, part) in [
            (13, "header"), (20, "header"), (30, "header"), (40, "section table"), (32 + 32 * 3 + 9, "section table"),
        ] {
            var damaged = bytes
            damaged[position] ^= 0x01
            #expect(Self.error(damaged) == .checksumMismatch(section: part), "byte \(position)")
        }
    }

    /// Every prefix and every single flipped bit of a small file is an error, never a crash or a silent success.
    @Test func everyPrefixAndEveryFlippedBitOfASmallFileIsRefused() {
        var network = RoadNetwork()
        let a = network.addNode(id: 1, lat: 60.1, lon: 24.9),
            b = network.addNode(id: 2, lat: 60.2, lon: 24.9, delaySeconds: 8)
        let ab = network.addEdge(from: a, to: b, durationSeconds: 10, name: "Unioninkatu")
        let ba = network.addEdge(from: b, to: a, durationSeconds: 10, name: "Unioninkatu")
        network.addRestriction(TurnRestriction(fromEdge: ab, viaNode: b, toEdge: ba, kind: .no))
        let bytes = RoadGraphFile.encode(network, metadata: Self.metadata)
        #expect(Self.error(bytes) == nil)
        for length in 0..<bytes.count where Self.error(Array(bytes[0..<length])) == nil {
            Issue.record("a file cut to \(length) of \(bytes.count) bytes was accepted")
        }
        for position in bytes.indices {
            for bit in 0..<8 {
                var damaged = bytes
                damaged[position] ^= 1 << bit
                if Self.error(damaged) == nil { Issue.record("flipping bit \(bit) of byte \(position) went unnoticed") }
            }
        }
    }

    @Test func aWrongMagicIsNotAGraphFile() async throws {
        let (_, bytes) = try await Self.helsinkiBytes()
        var damaged = bytes
        damaged[0] = UInt8(ascii: "X")
        #expect(Self.error(damaged) == .notAGraphFile)
        #expect(Self.error(Array("PK\u{3}\u{4} a zip file, say".utf8)) == .notAGraphFile)
        #expect(RoadGraphFileError.notAGraphFile.description.contains("not an EnRoute graph file"))
    }

    @Test func aFutureVersionIsRefusedWithBothVersionsNamed() async throws {
        let (_, bytes) = try await Self.helsinkiBytes()
        var future = bytes
        future[8] = 2
        #expect(Self.error(future) == .unsupportedVersion(found: 2, supported: 1))
        #expect(
            RoadGraphFileError.unsupportedVersion(found: 2, supported: 1).description.contains(
                "version 2 is not supported"))
    }

    /// A later format can add a section (say a contraction hierarchy) and this reader still loads the file.
    @Test func anUnknownSectionIsSkipped() async throws {
        var network = RoadNetwork()
        let a = network.addNode(id: 1, lat: 60.1, lon: 24.9), b = network.addNode(id: 2, lat: 60.2, lon: 24.9)
        network.addEdge(from: a, to: b, durationSeconds: 10)
        let bytes = RoadGraphFile.encode(network)
        let tagged = Self.sections(bytes).map {
            (tag: RoadGraphFile.Section(rawValue: $0.tag)!.tag, bytes: Array(bytes[$0.offset..<$0.offset + $0.length]))
        }
        let future = RoadGraphFile.assemble(tagged + [(tag: 0x4843_5F5F, bytes: [1, 2, 3, 4, 5])])
        let read = try Self.decode(future).network
        #expect(read.edgeCount == 1 && read.nodeIDs == [1, 2])
    }

    /// Checksums pass but the values cannot be a network: each is refused naming its section.
    @Test func wellFormedButInconsistentArraysAreInvalidNamingTheSection() async throws {
        func network(
            edgeTo: [Int32] = [1], nameIndex: [Int32] = [0], starts: [Int32] = [0, 2], lat: Double = 60.1,
            names: [String] = [""], restrictions: [TurnRestriction] = []
        ) -> RoadNetwork {
            RoadNetwork(
                nodeIDs: [1, 2], nodeLats: [lat, 60.2], nodeLons: [24.9, 24.9], nodeDelaySeconds: [0, 0],
                edgeFrom: [0], edgeTo: edgeTo, edgeLengthMeters: [100], edgeDurationSeconds: [10],
                edgeRoadClass: [0], edgeNameIndex: nameIndex, geometryStart: starts,
                geometryLats: [60.1, 60.2], geometryLons: [24.9, 24.9], names: names,
                restrictions: restrictions, turnCosts: .standard, edgeIsDestinationOnly: [false],
                edgeIsRoundabout: [false])
        }
        func section(_ network: RoadNetwork) -> String? {
            if case let .invalid(section, _) = Self.error(RoadGraphFile.encode(network)) { return section }
            return nil
        }
        #expect(Self.error(RoadGraphFile.encode(network())) == nil)
        #expect(section(network(edgeTo: [2])) == "edges")
        #expect(section(network(nameIndex: [3])) == "edges")
        #expect(section(network(starts: [0, 1])) == "geometry")
        #expect(section(network(lat: 95)) == "nodes")
        #expect(section(network(names: ["Aleksanterinkatu"])) == "names")
        #expect(section(network(names: ["", "x", "x"])) == "names")
        #expect(
            section(network(restrictions: [TurnRestriction(fromEdge: 0, viaNode: 0, toEdge: 0, kind: .no)]))
                == "restrictions")
    }

    @Test func aMissingFileIsAnIOErrorNamingThePath() {
        #expect(throws: RoadGraphFileError.io(path: "/nonexistent/x.graph", detail: "no such file")) {
            try RoadGraphFile.read("/nonexistent/x.graph")
        }
    }
}
