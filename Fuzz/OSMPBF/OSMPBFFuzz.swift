@testable import OSMPBF

/// OSMReader on arbitrary bytes: a first byte of 0 says a whole file follows; any other, a PrimitiveBlock that the
/// target frames in a raw blob after a valid header (so mutations reach the block decoder without breaking the frame).
/// Properties: reading fails only with an OSMPBFError; a file that reads whole reads the same nodes, ways and
/// relations when only one kind is asked for (the groups stepped over are not decoded); entities read (with ids and
/// positions the format can hold) written out with OSMPBFWriter read back the same, positions to the 100 nanodegrees
/// the writer keeps.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOSMPBF(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let file = data[0] == 0 ? input : header + frame("OSMData", rawBlob(input))
    guard let whole = read(file, nodes: true, ways: true, relations: true) else { return 0 }
    let nodesOnly = read(file, nodes: true, ways: false, relations: false)
    property(nodesOnly?.nodes == whole.nodes && nodesOnly?.ways == [], "nodes alone read differently")
    let waysOnly = read(file, nodes: false, ways: true, relations: false)
    property(waysOnly?.ways == whole.ways && waysOnly?.relations == [], "ways alone read differently")
    let relationsOnly = read(file, nodes: false, ways: false, relations: true)
    property(
        relationsOnly?.relations == whole.relations && relationsOnly?.nodes == [], "relations alone read differently")
    roundTrip(whole)
    return 0
}

private struct Entities: Equatable {
    var nodes: [OSMNode] = []
    var ways: [OSMWay] = []
    var relations: [OSMRelation] = []
}

/// The entities of `file`, or nil when it is refused (with an OSMPBFError: anything else ends the run).
private func read(_ file: [UInt8], nodes: Bool, ways: Bool, relations: Bool) -> Entities? {
    var entities = Entities()
    do {
        let reader = try OSMReader(bytes: file)
        try reader.read(
            nodes: nodes ? { entities.nodes.append($0) } : nil, ways: ways ? { entities.ways.append($0) } : nil,
            relations: relations ? { entities.relations.append($0) } : nil)
        return entities
    } catch {
        property(error is OSMPBFError, "a read failed with \(type(of: error)): \(error)")
        return nil
    }
}

private func roundTrip(_ entities: Entities) {
    let small = { (id: Int64) in id.magnitude < 1 << 60 }
    guard entities.nodes.allSatisfy({ small($0.id) && abs($0.lat) <= 90 && abs($0.lon) <= 180 }),
        entities.ways.allSatisfy({ small($0.id) && $0.refs.allSatisfy(small) }),
        entities.relations.allSatisfy({ small($0.id) && $0.members.allSatisfy { small($0.ref) } })
    else { return }
    do {
        let bytes = try OSMPBFWriter.encode(nodes: entities.nodes, ways: entities.ways, relations: entities.relations)
        guard let again = read(bytes, nodes: true, ways: true, relations: true) else {
            property(false, "what the writer wrote is refused")
            return
        }
        property(
            again.ways == entities.ways && again.relations == entities.relations, "ways or relations written differ")
        property(
            again.nodes.count == entities.nodes.count
                && zip(again.nodes, entities.nodes).allSatisfy {
                    $0.id == $1.id && $0.tags == $1.tags && abs($0.lat - $1.lat) <= 1e-7 && abs($0.lon - $1.lon) <= 1e-7
                }, "nodes written read back differently")
    } catch {
        property(false, "the writer refused what the reader read: \(error)")
    }
}

private let header: [UInt8] = {
    var block = PBFEncoder()
    block.stringField(4, "OsmSchema-V0.6")
    block.stringField(4, "DenseNodes")
    return frame("OSMHeader", rawBlob(block.bytes))
}()

private func frame(_ type: String, _ blob: [UInt8]) -> [UInt8] {
    var header = PBFEncoder()
    header.stringField(1, type)
    header.varintField(3, UInt64(blob.count))
    let n = UInt32(header.bytes.count)
    return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + header.bytes + blob
}

private func rawBlob(_ contents: [UInt8]) -> [UInt8] {
    var blob = PBFEncoder()
    blob.bytesField(1, contents)
    blob.varintField(2, UInt64(contents.count))
    return blob.bytes
}
