import Foundation
import EnRouteModels

/// LocationBatchJSON (compiled into this target from Sources/EnRouteAPI) on arbitrary bodies, against Foundation's
/// `JSONDecoder` with the API's coders. Property: whenever the reader gives a batch, the decoder reads the same bytes
/// to an equal batch; the reader never gives one the decoder refuses or reads differently.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLocationBatch(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    guard let fast = LocationBatchJSON.decode(body) else { return 0 }
    let decoded = try? WireCoding.decoder().decode(LocationBatch.self, from: Data(body))
    property(decoded != nil, "the reader took a body the decoder refuses")
    property(
        decoded == fast, "the reader and the decoder read different batches: \(fast), \(String(describing: decoded))")
    return 0
}
