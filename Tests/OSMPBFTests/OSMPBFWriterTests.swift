import Foundation
import OSMPBF
import Testing

/// OSMPBF's PBF writer: what it writes, OSMReader reads back entity for entity, across several zlib blocks.
@Suite struct OSMPBFWriterTests {
    static func entities() -> ([OSMNode], [OSMWay], [OSMRelation]) {
        var nodes: [OSMNode] = []
        // More nodes than one block holds, so the deltas restart at each block.
        for index in 0..<(OSMPBFWriter.entitiesPerBlock + 1234) {
            let tags: [String: String] = index % 97 == 0 ? ["highway": "traffic_signals"] : [:]
            nodes.append(
                OSMNode(
                    id: Int64(index * 3 + 1), lat: 60.1 + Double(index) * 1e-6, lon: 24.9 - Double(index % 500) * 3e-6,
                    tags: tags))
        }
        nodes.append(OSMNode(id: -7, lat: -33.8688197, lon: 151.2092955, tags: ["name": "Sydney", "place": "city"]))
        let ways = [
            OSMWay(
                id: 100, refs: [1, 4, 7, 1], tags: ["highway": "primary", "name": "Mannerheimintie", "maxspeed": "50"]),
            OSMWay(id: 101, refs: [7, 10], tags: ["highway": "residential", "oneway": "yes"]),
        ]
        let relations = [
            OSMRelation(
                id: 200,
                members: [
                    OSMMember(type: .way, ref: 100, role: "from"), OSMMember(type: .node, ref: 7, role: "via"),
                    OSMMember(type: .way, ref: 101, role: "to"),
                ], tags: ["type": "restriction", "restriction": "no_left_turn"])
        ]
        return (nodes, ways, relations)
    }

    @Test func writtenEntitiesReadBackTheSameAcrossBlocks() throws {
        let (nodes, ways, relations) = Self.entities()
        let box = OSMBoundingBox(minLat: -34, minLon: 24, maxLat: 61, maxLon: 152)
        let bytes = try OSMPBFWriter.encode(nodes: nodes, ways: ways, relations: relations, boundingBox: box)
        let reader = try OSMReader(bytes: bytes)
        #expect(reader.header.requiredFeatures == ["OsmSchema-V0.6", "DenseNodes"])
        let read = try #require(reader.boundingBox)
        #expect(abs(read.minLat - box.minLat) < 1e-9 && abs(read.maxLon - box.maxLon) < 1e-9)
        var readNodes: [OSMNode] = [], readWays: [OSMWay] = [], readRelations: [OSMRelation] = []
        try reader.read(
            nodes: { readNodes.append($0) }, ways: { readWays.append($0) }, relations: { readRelations.append($0) })
        #expect(readNodes.count == nodes.count)
        for (written, got) in zip(nodes, readNodes) {
            #expect(written.id == got.id && written.tags == got.tags)
            #expect(abs(written.lat - got.lat) < 1e-7 && abs(written.lon - got.lon) < 1e-7)
        }
        #expect(readWays == ways)
        #expect(readRelations == relations)
    }

    @Test func aFileWriterStreamsFramesToDiskThatTheReaderOpens() throws {
        let (nodes, ways, relations) = Self.entities()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("osmkit-\(UUID().uuidString).osm.pbf")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try OSMPBFWriter(path: path)
        for node in nodes { try writer.write(node) }
        for way in ways { try writer.write(way) }
        for relation in relations { try writer.write(relation) }
        try writer.finish()
        var counts = (0, 0, 0)
        try OSMReader(path: path).read(
            nodes: { _ in counts.0 += 1 }, ways: { _ in counts.1 += 1 }, relations: { _ in counts.2 += 1 })
        #expect(counts == (nodes.count, ways.count, relations.count))
    }
}
