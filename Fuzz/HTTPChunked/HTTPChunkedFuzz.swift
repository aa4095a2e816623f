@testable import HTTPEngine

/// ChunkedDecoder on arbitrary bytes. Properties: the input fed whole, split in two at any point, or a byte at a time
/// gives the same outcome and the same body; the body counted is the body kept, and never longer than the bytes read
/// less the last chunk's line; a body not kept is still counted; a finished body written back out as one chunk
/// decodes to the same bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPChunked(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = decode([input[...]])
    property(whole.body.count == whole.decoded, "kept \(whole.body.count) bytes of \(whole.decoded) decoded")
    if case .done(let consumed) = whole.outcome {
        property(consumed <= size && whole.body.count <= consumed - 3, "a body of \(whole.body.count) in \(consumed)")
        let rewritten =
            Array("\(String(whole.body.count, radix: 16))\r\n".utf8) + whole.body + Array("\r\n0\r\n\r\n".utf8)
        let again = decode([rewritten[...]])
        let expected = whole.body.isEmpty ? ChunkedDecoder.Outcome.malformed : .done(consumed: rewritten.count)
        if !whole.body.isEmpty {
            property(
                again.outcome == expected && again.body == whole.body, "the body as one chunk reads as \(again.outcome)"
            )
        }
    }
    for k in splitPoints(size) {
        let split = decode([input[..<k], input[k...]])
        property(split.outcome == whole.outcome, "split at \(k): \(split.outcome), whole: \(whole.outcome)")
        property(split.body == whole.body, "split at \(k): a body of \(split.body.count), whole: \(whole.body.count)")
    }
    let bytewise = decode(input.indices.map { input[$0...$0] })
    property(bytewise.outcome == whole.outcome && bytewise.body == whole.body, "a byte at a time: \(bytewise.outcome)")
    var counted = 0
    var none: [UInt8] = []
    var decoder = ChunkedDecoder()
    let outcome = input.withUnsafeBytes { decoder.decode($0, into: &none, keep: false, decoded: &counted) }
    property(outcome == whole.outcome && counted == whole.decoded && none.isEmpty, "a body not kept: \(outcome)")
    return 0
}

/// Feeds `pieces` in turn until the body ends or is refused; `done` counts from the start of the first piece.
private func decode(_ pieces: [ArraySlice<UInt8>]) -> (outcome: ChunkedDecoder.Outcome, body: [UInt8], decoded: Int) {
    var decoder = ChunkedDecoder()
    var body: [UInt8] = []
    var decoded = 0
    var offset = 0
    var outcome = ChunkedDecoder.Outcome.needMore
    for piece in pieces {
        outcome = piece.withUnsafeBytes { decoder.decode($0, into: &body, keep: true, decoded: &decoded) }
        switch outcome {
        case .needMore: offset += piece.count
        case .done(let consumed): return (.done(consumed: offset + consumed), body, decoded)
        case .malformed: return (.malformed, body, decoded)
        }
    }
    return (outcome, body, decoded)
}
