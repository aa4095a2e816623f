import HTTPTransport

/// SSEParser on arbitrary bytes. Properties: the stream fed whole, split in two at any point, or a byte at a time gives
/// the same events, last event ID and retry; an event's type and data hold no CR, its type and ID no LF, its ID no
/// NUL; every event, written back out as a stream, is read as the same event by a fresh parser.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSSE(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = feed([input[...]])
    for k in splitPoints(size) {
        property(feed([input[..<k], input[k...]]) == whole, "split at \(k) reads differently")
    }
    property(feed(input.indices.map { input[$0...$0] }) == whole, "a byte at a time reads differently")
    if let retry = whole.retry { property(retry >= 0, "retry \(retry)") }
    for event in whole.events {
        property(!event.event.isEmpty && !event.event.contains("\r") && !event.event.contains("\n"), "type \(event)")
        property(!event.data.contains("\r"), "data with a CR: \(event)")
        if let id = event.id { property(!id.isEmpty && !id.contains { "\r\n\0".contains($0) }, "ID \(event)") }
        var text = "event: \(event.event)\n"
        if let id = event.id { text += "id: \(id)\n" }
        for line in event.data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        var fresh = SSEParser()
        property(fresh.feed(Array((text + "\n").utf8)) == [event], "\(event) written out reads differently")
    }
    return 0
}

private struct Reading: Equatable {
    var events: [ServerSentEvent] = []
    var lastEventID: String?
    var retry: Int?
}

private func feed(_ pieces: [ArraySlice<UInt8>]) -> Reading {
    var parser = SSEParser()
    var reading = Reading()
    for piece in pieces { reading.events += parser.feed(piece) }
    reading.lastEventID = parser.lastEventID
    reading.retry = parser.retryMilliseconds
    return reading
}
