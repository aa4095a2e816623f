@testable import OSMPBF

/// Builds PBF files frame by frame.
enum PBFWriter {
    /// One frame: a big-endian BlobHeader length, the BlobHeader (`type`, `datasize`), then `blob`.
    static func frame(type: String, blob: [UInt8], claimedSize: Int? = nil) -> [UInt8] {
        var header = PBFEncoder()
        header.stringField(1, type)
        header.varintField(3, UInt64(claimedSize ?? blob.count))
        let length = UInt32(header.bytes.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)]
            + header.bytes + blob
    }

    /// A Blob holding `contents` uncompressed.
    static func rawBlob(_ contents: [UInt8]) -> [UInt8] {
        var blob = PBFEncoder()
        blob.bytesField(1, contents)
        blob.varintField(2, UInt64(contents.count))
        return blob.bytes
    }

    /// An OSMHeader frame requiring `features`.
    static func headerFrame(features: [String] = ["OsmSchema-V0.6", "DenseNodes"]) -> [UInt8] {
        var block = PBFEncoder()
        block.message(1) { bbox in
            bbox.sint64Field(1, 24_930_000_000)
            bbox.sint64Field(2, 24_960_000_000)
            bbox.sint64Field(3, 60_180_000_000)
            bbox.sint64Field(4, 60_160_000_000)
        }
        for feature in features { block.stringField(4, feature) }
        block.stringField(16, "OSMPBFTests")
        return frame(type: "OSMHeader", blob: rawBlob(block.bytes))
    }
}
