@testable import OSMPBF
import Testing

/// Broken input is a thrown `OSMPBFError` naming where and what, never a crash.
@Suite struct OSMReaderMalformedTests {
    /// The error `body` throws, or nil when it throws none or another type.
    private func error(_ body: () throws -> Void) -> OSMPBFError? {
        do {
            try body()
            return nil
        } catch {
            return error as? OSMPBFError
        }
    }

    /// A file with the test header and one OSMData frame around `blob`.
    private func dataFile(blob: [UInt8], claimedSize: Int? = nil) -> [UInt8] {
        PBFWriter.headerFrame() + PBFWriter.frame(type: "OSMData", blob: blob, claimedSize: claimedSize)
    }

    /// The start of the second frame (the first OSMData blob) of a real file.
    private func secondFrameOffset(_ bytes: [UInt8]) -> Int {
        let headerLength = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        // The BlobHeader ends with datasize (field 3), a varint; read it back from the header's bytes.
        var position = 4, dataSize = 0
        while position < 4 + headerLength {
            let key = bytes[position]
            position += 1
            if key == 0x18 {
                var shift = 0
                while true {
                    let byte = bytes[position]
                    position += 1
                    dataSize |= Int(byte & 0x7f) << shift
                    if byte < 0x80 { break }
                    shift += 7
                }
            } else {
                position += 1 + Int(bytes[position])  // a short length-delimited field (the type string)
            }
        }
        return 4 + headerLength + dataSize
    }

    @Test func aFileCutInsideABlobIsTruncatedAtThatBlob() throws {
        let bytes = try OSMExtracts.bytes("Helsinki-raw.osm.pbf")
        let cut = Array(bytes.prefix(secondFrameOffset(bytes) + 100))
        let reader = try OSMReader(bytes: cut)
        let failure = error { try reader.read(nodes: { _ in }) }
        guard case .truncated(let offset, let what, let needed, let available)? = failure else {
            Issue.record("expected truncated, got \(String(describing: failure))")
            return
        }
        #expect(what == "the OSMData Blob")
        #expect(offset > secondFrameOffset(bytes) && offset < secondFrameOffset(bytes) + 100)
        #expect(available < needed)
        #expect(failure?.description.contains("truncated at byte \(offset)") == true)
    }

    @Test func aFileCutInsideAFrameLengthIsTruncated() throws {
        let bytes = try OSMExtracts.bytes("Helsinki-raw.osm.pbf")
        let second = secondFrameOffset(bytes)
        let reader = try OSMReader(bytes: Array(bytes.prefix(second + 2)))
        #expect(
            error { try reader.read(nodes: { _ in }) }
                == .truncated(offset: second, what: "the BlobHeader length", needed: 4, available: 2))
    }

    @Test func aCorruptedZlibBlobFailsToInflateNamingTheBlob() throws {
        var bytes = try OSMExtracts.bytes("Helsinki-raw.osm.pbf")
        let second = secondFrameOffset(bytes)
        for index in (second + 200)..<(second + 264) { bytes[index] ^= 0x5a }
        let reader = try OSMReader(bytes: bytes)
        let failure = error { try reader.read(nodes: { _ in }) }
        guard case .decompressionFailed(let offset, _)? = failure else {
            Issue.record("expected decompressionFailed, got \(String(describing: failure))")
            return
        }
        #expect(offset == second)
    }

    @Test func aBlobClaimingMoreThan32MiBIsRefusedBeforeReadingIt() throws {
        let file = dataFile(blob: [], claimedSize: 40 * 1024 * 1024)
        let reader = try OSMReader(bytes: file)
        #expect(
            error { try reader.read(nodes: { _ in }) }
                == .blobTooLarge(offset: PBFWriter.headerFrame().count, size: 40 * 1024 * 1024))
    }

    @Test func aBlobHeaderOver64KiBIsRefused() {
        #expect(
            error { _ = try OSMReader(bytes: Array("hello, not a PBF file".utf8)) }
                == .blobHeaderTooLarge(offset: 0, size: 0x6865_6c6c))
    }

    @Test func aVarintLongerThan64BitsIsMalformed() throws {
        let reader = try OSMReader(
            bytes: dataFile(blob: PBFWriter.rawBlob([0x0a] + [UInt8](repeating: 0xff, count: 11))))
        let failure = error { try reader.read(nodes: { _ in }) }
        guard case .malformed(let offset, let block, _, let reason)? = failure else {
            Issue.record("expected malformed, got \(String(describing: failure))")
            return
        }
        #expect(offset == PBFWriter.headerFrame().count)
        #expect(block == "PrimitiveBlock")
        #expect(reason.contains("varint"))
    }

    @Test func aLengthPastTheEndOfTheBlockIsMalformed() throws {
        let reader = try OSMReader(bytes: dataFile(blob: PBFWriter.rawBlob([0x12, 0x7f, 0x00])))
        let failure = error { try reader.read(nodes: { _ in }) }
        guard case .malformed(_, "PrimitiveBlock", 1, let reason)? = failure else {
            Issue.record("expected malformed at byte 1, got \(String(describing: failure))")
            return
        }
        #expect(reason.contains("length 127"))
    }

    @Test func aTagNamingAMissingStringIsMalformed() throws {
        var block = PBFEncoder()
        block.message(1) { table in table.stringField(1, "") }
        block.message(2) { group in
            group.message(3) { way in
                way.varintField(1, 1)
                way.packedVarint(2, [5])
                way.packedVarint(3, [6])
            }
        }
        let reader = try OSMReader(bytes: dataFile(blob: PBFWriter.rawBlob(block.bytes)))
        let failure = error { try reader.read(ways: { _ in }) }
        guard case .malformed(_, "PrimitiveBlock", _, let reason)? = failure else {
            Issue.record("expected malformed, got \(String(describing: failure))")
            return
        }
        #expect(reason.contains("string 5"))
    }

    @Test func anUnknownCompressionIsNamed() throws {
        var blob = PBFEncoder()
        blob.varintField(2, 10)
        blob.bytesField(7, [1, 2, 3])
        let reader = try OSMReader(bytes: dataFile(blob: blob.bytes))
        let failure = error { try reader.read(nodes: { _ in }) }
        #expect(failure == .unsupportedCompression(offset: PBFWriter.headerFrame().count, compression: "zstd"))
        #expect(failure?.description.contains("zstd") == true)
    }

    @Test func anUnknownRequiredFeatureIsRefusedWhenOpening() {
        let failure = error {
            _ = try OSMReader(bytes: PBFWriter.headerFrame(features: ["OsmSchema-V0.6", "HistoricalInformation"]))
        }
        #expect(failure == .unsupportedFeatures(["HistoricalInformation"]))
        #expect(failure?.description.contains("HistoricalInformation") == true)
    }

    @Test func aFileNotStartingWithAHeaderIsRefused() {
        let file = PBFWriter.frame(type: "OSMData", blob: PBFWriter.rawBlob([]))
        #expect(error { _ = try OSMReader(bytes: file) } == .missingHeader(offset: 0, found: "OSMData"))
    }

    @Test func anEmptyOrMissingFileIsAnError() {
        #expect(error { _ = try OSMReader(bytes: []) } == .empty)
        let failure = error { _ = try OSMReader(path: "/nonexistent/none.osm.pbf") }
        guard case .cannotOpen(let path, _)? = failure else {
            Issue.record("expected cannotOpen, got \(String(describing: failure))")
            return
        }
        #expect(path == "/nonexistent/none.osm.pbf")
    }
}

/// Every prefix and every single-byte corruption of a small uncompressed file reads or throws `OSMPBFError`:
/// the decoder's bounds checks hold wherever the damage falls (a trap would end the test process).
@Suite struct OSMReaderDamageTests {
    private func readsOrThrowsOSMPBFError(_ bytes: [UInt8]) -> Bool {
        do {
            try OSMReader(bytes: bytes).read(nodes: { _ in }, ways: { _ in }, relations: { _ in })
            return true
        } catch is OSMPBFError {
            return true
        } catch {
            return false
        }
    }

    @Test func everyTruncationIsReadOrRefusedWithoutACrash() {
        let file = OSMReaderHandBuiltTests.makeFile()
        var refused = 0
        for length in 0..<file.count {
            let prefix = Array(file.prefix(length))
            #expect(readsOrThrowsOSMPBFError(prefix), "prefix of \(length) bytes")
            if (try? OSMReader(bytes: prefix).read(nodes: { _ in })) == nil { refused += 1 }
        }
        // A prefix that ends on a frame boundary (after the header) is a valid, shorter file; every other is refused.
        #expect(refused == file.count - 1)
    }

    @Test func everySingleByteCorruptionIsReadOrRefusedWithoutACrash() {
        let file = OSMReaderHandBuiltTests.makeFile()
        for index in file.indices {
            for flip: UInt8 in [0x01, 0x80, 0xff] {
                var damaged = file
                damaged[index] ^= flip
                #expect(readsOrThrowsOSMPBFError(damaged), "byte \(index) ^ \(flip)")
            }
        }
    }
}
