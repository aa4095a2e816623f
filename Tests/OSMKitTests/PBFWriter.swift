/// A minimal protobuf and PBF framing encoder for hand-built test files (raw, uncompressed blobs).
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7f) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func key(_ field: Int, wireType: Int) { varint(UInt64(field << 3 | wireType)) }

    mutating func varintField(_ field: Int, _ value: UInt64) {
        key(field, wireType: 0)
        varint(value)
    }

    mutating func sint64Field(_ field: Int, _ value: Int64) { varintField(field, Self.zigzag(value)) }

    mutating func bytesField(_ field: Int, _ payload: [UInt8]) {
        key(field, wireType: 2)
        varint(UInt64(payload.count))
        bytes += payload
    }

    mutating func stringField(_ field: Int, _ text: String) { bytesField(field, Array(text.utf8)) }

    mutating func messageField(_ field: Int, _ build: (inout ProtobufWriter) -> Void) {
        var inner = ProtobufWriter()
        build(&inner)
        bytesField(field, inner.bytes)
    }

    mutating func packedField(_ field: Int, _ values: [UInt64]) {
        var inner = ProtobufWriter()
        for value in values { inner.varint(value) }
        bytesField(field, inner.bytes)
    }

    static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }
}

/// Builds PBF files frame by frame.
enum PBFWriter {
    /// One frame: a big-endian BlobHeader length, the BlobHeader (`type`, `datasize`), then `blob`.
    static func frame(type: String, blob: [UInt8], claimedSize: Int? = nil) -> [UInt8] {
        var header = ProtobufWriter()
        header.stringField(1, type)
        header.varintField(3, UInt64(claimedSize ?? blob.count))
        let length = UInt32(header.bytes.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)] + header.bytes + blob
    }

    /// A Blob holding `contents` uncompressed.
    static func rawBlob(_ contents: [UInt8]) -> [UInt8] {
        var blob = ProtobufWriter()
        blob.bytesField(1, contents)
        blob.varintField(2, UInt64(contents.count))
        return blob.bytes
    }

    /// An OSMHeader frame requiring `features`.
    static func headerFrame(features: [String] = ["OsmSchema-V0.6", "DenseNodes"]) -> [UInt8] {
        var block = ProtobufWriter()
        block.messageField(1) { bbox in
            bbox.sint64Field(1, 24_930_000_000)
            bbox.sint64Field(2, 24_960_000_000)
            bbox.sint64Field(3, 60_180_000_000)
            bbox.sint64Field(4, 60_160_000_000)
        }
        for feature in features { block.stringField(4, feature) }
        block.stringField(16, "OSMKitTests")
        return frame(type: "OSMHeader", blob: rawBlob(block.bytes))
    }
}
