/// An incremental RESP2 reader: bytes go in as they arrive, complete replies come out in order.
///
/// `next()` answers nil until a whole reply is buffered (a frame split anywhere, even inside `\r\n`, waits for the
/// rest), so the caller reads from its socket until it gets one. Bulk strings are binary safe.
public struct RESPParser: Sendable {
    /// The largest bulk string accepted (Redis's own `proto-max-bulk-len` default).
    public static let maxBulkLength = 512 * 1024 * 1024
    /// The deepest nesting of arrays accepted.
    public static let maxDepth = 64

    private var buffer: [UInt8] = []
    private var start = 0

    /// An empty parser.
    public init() {}

    /// Bytes received and not yet consumed by a complete reply.
    public var bufferedCount: Int { buffer.count - start }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Drops everything buffered (after the connection under it is gone).
    public mutating func reset() {
        buffer.removeAll(keepingCapacity: false)
        start = 0
    }

    /// The next complete reply, or nil if more bytes are needed; throws on bytes that are not RESP2.
    public mutating func next() throws(RedisClientError) -> RESPValue? {
        var cursor = start
        guard let value = try parse(at: &cursor, depth: 0) else { return nil }
        start = cursor
        return value
    }

    private func parse(at cursor: inout Int, depth: Int) throws(RedisClientError) -> RESPValue? {
        guard cursor < buffer.count else { return nil }
        let type = buffer[cursor]
        var position = cursor + 1
        guard let lineEnd = try lineEnd(from: position) else { return nil }
        let line = buffer[position..<lineEnd]
        position = lineEnd + 2
        let value: RESPValue
        switch type {
        case UInt8(ascii: "+"):
            value = .simple(String(decoding: line, as: UTF8.self))
        case UInt8(ascii: "-"):
            value = .error(String(decoding: line, as: UTF8.self))
        case UInt8(ascii: ":"):
            value = .integer(try integer(line))
        case UInt8(ascii: "$"):
            let length = try integer(line)
            if length == -1 {
                value = .null
            } else {
                guard length >= 0, length <= Self.maxBulkLength else {
                    throw .protocolViolation("bulk length \(length)")
                }
                guard buffer.count - position >= length + 2 else { return nil }
                guard buffer[position + length] == 13, buffer[position + length + 1] == 10 else {
                    throw .protocolViolation("bulk string of \(length) bytes not followed by CRLF")
                }
                value = .bulk(Array(buffer[position..<(position + length)]))
                position += length + 2
            }
        case UInt8(ascii: "*"):
            let count = try integer(line)
            if count == -1 {
                value = .null
            } else {
                guard count >= 0 else { throw .protocolViolation("array length \(count)") }
                guard depth < Self.maxDepth else {
                    throw .protocolViolation("arrays nested deeper than \(Self.maxDepth)")
                }
                var elements: [RESPValue] = []
                // Each element takes at least 3 bytes, so a count beyond what is buffered cannot be complete yet;
                // reserve only what could be there (a hostile count must not allocate).
                elements.reserveCapacity(min(count, (buffer.count - position) / 3))
                for _ in 0..<count {
                    guard let element = try parse(at: &position, depth: depth + 1) else { return nil }
                    elements.append(element)
                }
                value = .array(elements)
            }
        default:
            throw .protocolViolation("unknown reply type byte 0x\(String(type, radix: 16))")
        }
        cursor = position
        return value
    }

    /// The index of the `\r` that ends the line starting at `from`, if the whole `\r\n` is buffered.
    private func lineEnd(from: Int) throws(RedisClientError) -> Int? {
        var index = from
        while index + 1 < buffer.count {
            if buffer[index] == 13 {
                guard buffer[index + 1] == 10 else {
                    throw .protocolViolation("a CR not followed by LF in a reply line")
                }
                return index
            }
            index += 1
        }
        return nil
    }

    private func integer(_ digits: ArraySlice<UInt8>) throws(RedisClientError) -> Int {
        guard let value = Int(String(decoding: digits, as: UTF8.self)) else {
            throw .protocolViolation("'\(String(decoding: digits, as: UTF8.self))' is not an integer")
        }
        return value
    }
}
