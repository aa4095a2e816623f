@testable import OSMPBF
import Testing

/// The decoder's rules on a small hand-built, uncompressed file: string table, granularity and offsets, delta coding.
@Suite struct OSMReaderHandBuiltTests {
    static let strings = [
        "", "highway", "primary", "name", "Mannerheimintie", "type", "restriction", "traffic_signals",
        "no_left_turn", "from", "via", "to",
    ]

    /// One OSMData block: dense nodes 10, 11, 15; a plain node -7; way 100 (a ring 10-11-15-10); relation 200.
    /// Coordinates are stored as offset + 100 × value nanodegrees, with a non-zero lat/lon offset.
    static func makeFile() -> [UInt8] {
        var block = PBFEncoder()
        block.message(1) { table in for string in strings { table.stringField(1, string) } }
        block.message(2) { group in
            group.message(2) { dense in
                dense.packedVarint(1, [10, 1, 4].map(PBFEncoder.zigzag))
                dense.packedVarint(8, [1_700_000, 1_000, -2_000].map(PBFEncoder.zigzag))
                dense.packedVarint(9, [9_400_000, 2_000, -3_000].map(PBFEncoder.zigzag))
                dense.packedVarint(10, [1, 7, 0, 0, 3, 4, 0])
            }
        }
        block.message(2) { group in
            group.message(1) { node in
                node.sint64Field(1, -7)
                node.packedVarint(2, [3])
                node.packedVarint(3, [4])
                node.sint64Field(8, 1_600_000)
                node.sint64Field(9, 9_300_000)
            }
        }
        block.message(2) { group in
            group.message(3) { way in
                way.varintField(1, 100)
                way.packedVarint(2, [1, 3])
                way.packedVarint(3, [2, 4])
                way.packedVarint(8, [10, 1, 4, -5].map(PBFEncoder.zigzag))
            }
            group.message(4) { relation in
                relation.varintField(1, 200)
                relation.packedVarint(2, [5, 6])
                relation.packedVarint(3, [6, 8])
                relation.packedVarint(8, [9, 10, 11])
                relation.packedVarint(9, [100, -90, 91].map(PBFEncoder.zigzag))
                relation.packedVarint(10, [1, 0, 1])
            }
        }
        block.varintField(19, 60_000_000_000)
        block.varintField(20, 24_000_000_000)
        return PBFWriter.headerFrame() + PBFWriter.frame(type: "OSMData", blob: PBFWriter.rawBlob(block.bytes))
    }

    @Test func decodesDeltaCodedDenseNodesWithOffsetsAndTags() throws {
        var nodes: [OSMNode] = []
        try OSMReader(bytes: Self.makeFile()).read(nodes: { nodes.append($0) })
        #expect(
            nodes == [
                OSMNode(id: 10, lat: 60.17, lon: 24.94, tags: ["highway": "traffic_signals"]),
                OSMNode(id: 11, lat: 60.1701, lon: 24.9402),
                OSMNode(id: 15, lat: 60.1699, lon: 24.9399, tags: ["name": "Mannerheimintie"]),
                OSMNode(id: -7, lat: 60.16, lon: 24.93, tags: ["name": "Mannerheimintie"]),
            ])
    }

    @Test func decodesDeltaCodedWayRefsAndRelationMembers() throws {
        var ways: [OSMWay] = []
        var relations: [OSMRelation] = []
        try OSMReader(bytes: Self.makeFile()).read(ways: { ways.append($0) }, relations: { relations.append($0) })
        #expect(
            ways == [OSMWay(id: 100, refs: [10, 11, 15, 10], tags: ["highway": "primary", "name": "Mannerheimintie"])])
        #expect(
            relations == [
                OSMRelation(
                    id: 200,
                    members: [
                        OSMMember(type: .way, ref: 100, role: "from"),
                        OSMMember(type: .node, ref: 10, role: "via"),
                        OSMMember(type: .way, ref: 101, role: "to"),
                    ], tags: ["type": "restriction", "restriction": "no_left_turn"])
            ])
    }

    @Test func readsTheHeaderOfAHandBuiltFile() throws {
        let reader = try OSMReader(bytes: Self.makeFile())
        #expect(reader.header.boundingBox == OSMBoundingBox(minLat: 60.16, minLon: 24.93, maxLat: 60.18, maxLon: 24.96))
        #expect(reader.header.writingProgram == "OSMPBFTests")
    }

    /// Blob types other than OSMHeader and OSMData are skipped, as the format asks.
    @Test func skipsUnknownBlobTypes() throws {
        let file =
            PBFWriter.headerFrame() + PBFWriter.frame(type: "SomethingElse", blob: [0xff, 0xff])
            + Array(Self.makeFile().dropFirst(PBFWriter.headerFrame().count))
        var count = 0
        try OSMReader(bytes: file).read(nodes: { _ in count += 1 })
        #expect(count == 4)
    }
}
