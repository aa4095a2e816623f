public import Foundation

/// An incremental `text/event-stream` parser (WHATWG HTML §9.2): feed bytes, get dispatched events.
public struct SSEParser: Sendable {
    private var pending: [UInt8] = []
    private var sawCR = false
    private var eventType = ""
    private var data: [String] = []
    private var hasData = false
    /// The last-event-ID buffer; persists across events until the server changes it.
    public private(set) var lastEventID: String?
    /// The reconnection time the server asked for, in milliseconds.
    public private(set) var retryMilliseconds: Int?
    private var bomChecked = false

    public init() {}

    /// Feeds a chunk and returns every event completed by it.
    public mutating func feed(_ chunk: some Sequence<UInt8>) -> [ServerSentEvent] {
        var out: [ServerSentEvent] = []
        for byte in chunk {
            if !bomChecked {
                pending.append(byte)
                if pending.count < 3, [0xEF, 0xBB].starts(with: pending) { continue }
                bomChecked = true
                if pending == [0xEF, 0xBB, 0xBF] { pending.removeAll(); continue }
                let bytes = pending
                pending.removeAll()
                for b in bytes { step(b, into: &out) }
                continue
            }
            step(byte, into: &out)
        }
        return out
    }

    private mutating func step(_ byte: UInt8, into out: inout [ServerSentEvent]) {
        if byte == 0x0A, sawCR { sawCR = false; return }  // the LF of a CRLF
        sawCR = byte == 0x0D
        if byte == 0x0A || byte == 0x0D {
            let line = String(decoding: pending, as: UTF8.self)
            pending.removeAll(keepingCapacity: true)
            if let event = process(line: line) { out.append(event) }
        } else {
            pending.append(byte)
        }
    }

    private mutating func process(line: String) -> ServerSentEvent? {
        if line.isEmpty { return dispatch() }
        if line.hasPrefix(":") { return nil }
        let name: Substring
        var value: Substring
        if let colon = line.firstIndex(of: ":") {
            name = line[..<colon]
            value = line[line.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
        } else {
            name = Substring(line)
            value = ""
        }
        switch name {
        case "event": eventType = String(value)
        case "data": data.append(String(value)); hasData = true
        case "id": if !value.contains("\0") { lastEventID = value.isEmpty ? nil : String(value) }
        case "retry":
            if !value.isEmpty, value.allSatisfy(\.isASCII), value.allSatisfy(\.isNumber) {
                retryMilliseconds = Int(value)
            }
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer { eventType = ""; data.removeAll(); hasData = false }
        guard hasData else { return nil }
        return ServerSentEvent(
            event: eventType.isEmpty ? "message" : eventType, data: data.joined(separator: "\n"), id: lastEventID)
    }
}
