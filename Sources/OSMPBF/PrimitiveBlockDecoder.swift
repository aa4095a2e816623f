/// Decodes an OSMData blob's PrimitiveBlock: the string table, the coordinate scale, then its groups of
/// nodes, dense nodes, ways and relations, handing each entity to the visitor as it is decoded.
enum PrimitiveBlockDecoder {
    /// The callbacks of one `OSMReader.read`; a nil callback means the entities of that kind are skipped.
    struct Visitor {
        let nodes: ((OSMNode) throws -> Void)?
        let ways: ((OSMWay) throws -> Void)?
        let relations: ((OSMRelation) throws -> Void)?
    }

    /// A block's string table and coordinate transform.
    struct Context {
        var strings: [String] = []
        var granularity: Int64 = 100
        var latOffset: Int64 = 0
        var lonOffset: Int64 = 0

        /// Degrees from a stored coordinate: 1e-9 × (offset + granularity × value). Dividing by 1e9 (rather than
        /// multiplying by 1e-9) gives the double nearest the exact decimal, the value `osmium cat` prints.
        @inline(__always)
        func degrees(_ value: Int64, offset: Int64) -> Double {
            Double(offset &+ granularity &* value) / 1e9
        }

        /// The string at `index`, or a failure naming the bad index.
        @inline(__always)
        func string(_ index: some BinaryInteger, at reader: ProtobufReader, for what: String) throws -> String {
            guard index >= 0, index < strings.count else {
                throw ProtobufError(
                    position: reader.position,
                    reason: "\(what) names string \(index); the string table has \(strings.count)")
            }
            return strings[Int(index)]
        }

        /// Tags from parallel key and value string indexes.
        func tags(
            keys: [UInt32], values: [UInt32], at reader: ProtobufReader, in message: String
        ) throws -> [String: String] {
            guard keys.count == values.count else {
                throw ProtobufError(
                    position: reader.position,
                    reason: "\(message) has \(keys.count) tag keys but \(values.count) values")
            }
            var tags = [String: String](minimumCapacity: keys.count)
            for (key, value) in zip(keys, values) {
                tags[try string(key, at: reader, for: "a \(message) tag key")] = try string(
                    value, at: reader, for: "a \(message) tag value")
            }
            return tags
        }
    }

    static func decode(_ message: ProtobufReader, visitor: Visitor) throws {
        // The groups may precede the string table and scale on the wire, so read those first and the groups after.
        var context = Context()
        var groups: [ProtobufReader] = []
        var reader = message
        while let (field, wire) = try reader.nextField() {
            switch field {
            case 1:
                try reader.expect(.lengthDelimited, wire, field: field, in: "PrimitiveBlock")
                var table = try reader.message()
                while let (field, wire) = try table.nextField() {
                    if field == 1 {
                        try table.expect(.lengthDelimited, wire, field: field, in: "StringTable")
                        context.strings.append(try table.string())
                    } else {
                        try table.skip(wire)
                    }
                }
            case 2:
                try reader.expect(.lengthDelimited, wire, field: field, in: "PrimitiveBlock")
                groups.append(try reader.message())
            case 17:
                try reader.expect(.varint, wire, field: field, in: "PrimitiveBlock")
                let at = reader.position
                context.granularity = Int64(try reader.int32())
                guard context.granularity > 0 else {
                    throw ProtobufError(position: at, reason: "granularity \(context.granularity) is not positive")
                }
            case 19:
                try reader.expect(.varint, wire, field: field, in: "PrimitiveBlock")
                context.latOffset = try reader.int64()
            case 20:
                try reader.expect(.varint, wire, field: field, in: "PrimitiveBlock")
                context.lonOffset = try reader.int64()
            default:
                try reader.skip(wire)
            }
        }
        for group in groups {
            try decodeGroup(group, context: context, visitor: visitor)
        }
    }

    private static func decodeGroup(_ message: ProtobufReader, context: Context, visitor: Visitor) throws {
        var reader = message
        while let (field, wire) = try reader.nextField() {
            switch field {
            case 1 where visitor.nodes != nil:
                try reader.expect(.lengthDelimited, wire, field: field, in: "PrimitiveGroup")
                try visitor.nodes?(try node(try reader.message(), context: context))
            case 2 where visitor.nodes != nil:
                try reader.expect(.lengthDelimited, wire, field: field, in: "PrimitiveGroup")
                try denseNodes(try reader.message(), context: context, visit: visitor.nodes!)
            case 3 where visitor.ways != nil:
                try reader.expect(.lengthDelimited, wire, field: field, in: "PrimitiveGroup")
                try visitor.ways?(try way(try reader.message(), context: context))
            case 4 where visitor.relations != nil:
                try reader.expect(.lengthDelimited, wire, field: field, in: "PrimitiveGroup")
                try visitor.relations?(try relation(try reader.message(), context: context))
            default:
                try reader.skip(wire)
            }
        }
    }

    /// A plain Node: id, keys, vals, lat, lon.
    private static func node(_ message: ProtobufReader, context: Context) throws -> OSMNode {
        var reader = message
        var id: Int64 = 0, lat: Int64 = 0, lon: Int64 = 0
        var keys: [UInt32] = [], values: [UInt32] = []
        while let (field, wire) = try reader.nextField() {
            switch field {
            case 1: try reader.expect(.varint, wire, field: field, in: "Node"); id = try reader.sint64()
            case 2:
                try reader.appendRepeated(wire, to: &keys, field: field, in: "Node") { UInt32(truncatingIfNeeded: $0) }
            case 3:
                try reader.appendRepeated(wire, to: &values, field: field, in: "Node") {
                    UInt32(truncatingIfNeeded: $0)
                }
            case 8: try reader.expect(.varint, wire, field: field, in: "Node"); lat = try reader.sint64()
            case 9: try reader.expect(.varint, wire, field: field, in: "Node"); lon = try reader.sint64()
            default: try reader.skip(wire)
            }
        }
        return OSMNode(
            id: id, lat: context.degrees(lat, offset: context.latOffset),
            lon: context.degrees(lon, offset: context.lonOffset),
            tags: try context.tags(keys: keys, values: values, at: reader, in: "Node"))
    }

    /// DenseNodes: delta-coded ids, lats and lons in parallel arrays, and every node's tags in one `keys_vals`
    /// array (key, value, key, value, ..., 0 per node; empty when no node in the group has tags).
    private static func denseNodes(_ message: ProtobufReader, context: Context, visit: (OSMNode) throws -> Void) throws
    {
        var reader = message
        var ids: [Int64] = [], lats: [Int64] = [], lons: [Int64] = []
        var keysValues: [Int32] = []
        while let (field, wire) = try reader.nextField() {
            switch field {
            case 1: try reader.appendRepeated(wire, to: &ids, field: field, in: "DenseNodes", ProtobufReader.zigzag)
            case 8: try reader.appendRepeated(wire, to: &lats, field: field, in: "DenseNodes", ProtobufReader.zigzag)
            case 9: try reader.appendRepeated(wire, to: &lons, field: field, in: "DenseNodes", ProtobufReader.zigzag)
            case 10:
                try reader.appendRepeated(wire, to: &keysValues, field: field, in: "DenseNodes") {
                    Int32(truncatingIfNeeded: $0)
                }
            default: try reader.skip(wire)
            }
        }
        guard ids.count == lats.count, ids.count == lons.count else {
            throw ProtobufError(
                position: reader.position,
                reason: "DenseNodes has \(ids.count) ids, \(lats.count) latitudes and \(lons.count) longitudes")
        }
        var id: Int64 = 0, lat: Int64 = 0, lon: Int64 = 0
        var tagIndex = 0
        for index in ids.indices {
            id &+= ids[index]
            lat &+= lats[index]
            lon &+= lons[index]
            var tags: [String: String] = [:]
            if tagIndex < keysValues.count {
                while true {
                    guard tagIndex < keysValues.count else {
                        throw ProtobufError(
                            position: reader.position,
                            reason: "DenseNodes keys_vals ends before node \(id)'s terminating 0")
                    }
                    let key = keysValues[tagIndex]
                    tagIndex += 1
                    if key == 0 { break }
                    guard tagIndex < keysValues.count else {
                        throw ProtobufError(
                            position: reader.position,
                            reason: "DenseNodes keys_vals ends inside node \(id)'s key/value pair")
                    }
                    let value = keysValues[tagIndex]
                    tagIndex += 1
                    tags[try context.string(key, at: reader, for: "a DenseNodes tag key")] =
                        try context.string(value, at: reader, for: "a DenseNodes tag value")
                }
            }
            try visit(
                OSMNode(
                    id: id, lat: context.degrees(lat, offset: context.latOffset),
                    lon: context.degrees(lon, offset: context.lonOffset), tags: tags))
        }
    }

    /// A Way: id, keys, vals, delta-coded refs.
    private static func way(_ message: ProtobufReader, context: Context) throws -> OSMWay {
        var reader = message
        var id: Int64 = 0
        var keys: [UInt32] = [], values: [UInt32] = []
        var refs: [Int64] = []
        while let (field, wire) = try reader.nextField() {
            switch field {
            case 1: try reader.expect(.varint, wire, field: field, in: "Way"); id = try reader.int64()
            case 2:
                try reader.appendRepeated(wire, to: &keys, field: field, in: "Way") { UInt32(truncatingIfNeeded: $0) }
            case 3:
                try reader.appendRepeated(wire, to: &values, field: field, in: "Way") { UInt32(truncatingIfNeeded: $0) }
            case 8: try reader.appendRepeated(wire, to: &refs, field: field, in: "Way", ProtobufReader.zigzag)
            default: try reader.skip(wire)
            }
        }
        var ref: Int64 = 0
        for index in refs.indices {
            ref &+= refs[index]
            refs[index] = ref
        }
        return OSMWay(id: id, refs: refs, tags: try context.tags(keys: keys, values: values, at: reader, in: "Way"))
    }

    /// A Relation: id, keys, vals, and its members as parallel arrays of role string ids, delta-coded member ids and
    /// types.
    private static func relation(_ message: ProtobufReader, context: Context) throws -> OSMRelation {
        var reader = message
        var id: Int64 = 0
        var keys: [UInt32] = [], values: [UInt32] = []
        var roles: [Int32] = [], memberIDs: [Int64] = [], types: [UInt64] = []
        while let (field, wire) = try reader.nextField() {
            switch field {
            case 1: try reader.expect(.varint, wire, field: field, in: "Relation"); id = try reader.int64()
            case 2:
                try reader.appendRepeated(wire, to: &keys, field: field, in: "Relation") {
                    UInt32(truncatingIfNeeded: $0)
                }
            case 3:
                try reader.appendRepeated(wire, to: &values, field: field, in: "Relation") {
                    UInt32(truncatingIfNeeded: $0)
                }
            case 8:
                try reader.appendRepeated(wire, to: &roles, field: field, in: "Relation") {
                    Int32(truncatingIfNeeded: $0)
                }
            case 9: try reader.appendRepeated(wire, to: &memberIDs, field: field, in: "Relation", ProtobufReader.zigzag)
            case 10: try reader.appendRepeated(wire, to: &types, field: field, in: "Relation") { $0 }
            default: try reader.skip(wire)
            }
        }
        guard roles.count == memberIDs.count, roles.count == types.count else {
            throw ProtobufError(
                position: reader.position,
                reason:
                    "Relation \(id) has \(roles.count) roles, \(memberIDs.count) member ids and \(types.count) "
                    + "member types"
            )
        }
        var members: [OSMMember] = []
        members.reserveCapacity(memberIDs.count)
        var ref: Int64 = 0
        for index in memberIDs.indices {
            ref &+= memberIDs[index]
            guard types[index] <= 2, let type = OSMMemberType(rawValue: Int(types[index])) else {
                throw ProtobufError(
                    position: reader.position, reason: "Relation \(id) has a member of unknown type \(types[index])")
            }
            members.append(
                OSMMember(
                    type: type, ref: ref,
                    role: try context.string(roles[index], at: reader, for: "Relation \(id)'s member role")))
        }
        return OSMRelation(
            id: id, members: members, tags: try context.tags(keys: keys, values: values, at: reader, in: "Relation"))
    }
}
