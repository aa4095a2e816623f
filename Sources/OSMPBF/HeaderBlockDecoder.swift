/// Decodes an OSMHeader blob's HeaderBlock message.
enum HeaderBlockDecoder {
    static func decode(_ message: ProtobufReader) throws -> OSMHeader {
        var reader = message
        var header = OSMHeader(
            boundingBox: nil, requiredFeatures: [], optionalFeatures: [], writingProgram: nil, source: nil)
        while let (field, wire) = try reader.nextField() {
            switch field {
            case 1:
                try reader.expect(.lengthDelimited, wire, field: field, in: "HeaderBlock")
                header.boundingBox = try boundingBox(try reader.message())
            case 4:
                try reader.expect(.lengthDelimited, wire, field: field, in: "HeaderBlock")
                header.requiredFeatures.append(try reader.string())
            case 5:
                try reader.expect(.lengthDelimited, wire, field: field, in: "HeaderBlock")
                header.optionalFeatures.append(try reader.string())
            case 16:
                try reader.expect(.lengthDelimited, wire, field: field, in: "HeaderBlock")
                header.writingProgram = try reader.string()
            case 17:
                try reader.expect(.lengthDelimited, wire, field: field, in: "HeaderBlock")
                header.source = try reader.string()
            default:
                try reader.skip(wire)
            }
        }
        return header
    }

    /// HeaderBBox: left, right, top, bottom as sint64 nanodegrees.
    private static func boundingBox(_ message: ProtobufReader) throws -> OSMBoundingBox {
        var reader = message
        var edges: [Int64] = [0, 0, 0, 0]
        while let (field, wire) = try reader.nextField() {
            if (1...4).contains(field) {
                try reader.expect(.varint, wire, field: field, in: "HeaderBBox")
                edges[field - 1] = try reader.sint64()
            } else {
                try reader.skip(wire)
            }
        }
        return OSMBoundingBox(
            minLat: Double(edges[3]) / 1e9, minLon: Double(edges[0]) / 1e9,
            maxLat: Double(edges[2]) / 1e9, maxLon: Double(edges[1]) / 1e9)
    }
}
