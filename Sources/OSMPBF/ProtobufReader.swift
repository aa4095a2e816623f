/// A failure inside one protobuf message: what was wrong and the byte (within the decoded block) where it was found.
struct ProtobufError: Error, Equatable {
    /// The byte position within the block being decoded.
    let position: Int
    /// What was wrong, in words.
    let reason: String
}

/// The protobuf wire types OSM PBF uses (groups, wire types 3 and 4, never appear and are refused).
enum WireType: Int {
    case varint = 0
    case fixed64 = 1
    case lengthDelimited = 2
    case fixed32 = 5
}

/// A hand-written protobuf decoder over a borrowed buffer: varints, zigzag, length-delimited fields and packed
/// repeated fields. Every read is bounds-checked and throws `ProtobufError` instead of trapping; the buffer must
/// outlive the reader (callers scope it inside `withUnsafeBufferPointer`).
struct ProtobufReader {
    private let base: UnsafeBufferPointer<UInt8>
    /// The next byte to read.
    private(set) var position: Int
    /// One past the last byte of this message.
    let end: Int

    /// A reader over the whole of `buffer`.
    init(_ buffer: UnsafeBufferPointer<UInt8>) {
        self.init(base: buffer, start: 0, end: buffer.count)
    }

    private init(base: UnsafeBufferPointer<UInt8>, start: Int, end: Int) {
        self.base = base
        self.position = start
        self.end = end
    }

    /// True when the message has no bytes left.
    var isAtEnd: Bool { position >= end }

    /// The next field's number and wire type, or nil at the end of the message.
    mutating func nextField() throws -> (number: Int, wireType: WireType)? {
        guard !isAtEnd else { return nil }
        let at = position
        let key = try varint()
        let number = key >> 3
        guard number > 0, number < 1 << 29 else {
            throw ProtobufError(position: at, reason: "field number \(number) is out of range")
        }
        guard let wireType = WireType(rawValue: Int(key & 7)) else {
            throw ProtobufError(position: at, reason: "field \(number) has unsupported wire type \(key & 7)")
        }
        return (Int(number), wireType)
    }

    /// A base-128 varint of at most ten bytes.
    mutating func varint() throws -> UInt64 {
        let start = position
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < end else {
                throw ProtobufError(position: start, reason: "varint runs past the end of the message")
            }
            let byte = base[position]
            position += 1
            if shift == 63, byte > 1 { throw ProtobufError(position: start, reason: "varint is longer than 64 bits") }
            result |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    /// A zigzag-encoded `sint64`.
    mutating func sint64() throws -> Int64 { Self.zigzag(try varint()) }

    /// A two's-complement `int64`.
    mutating func int64() throws -> Int64 { Int64(bitPattern: try varint()) }

    /// An `int32` (sign-extended on the wire, truncated here as protobuf does).
    mutating func int32() throws -> Int32 { Int32(truncatingIfNeeded: try varint()) }

    /// Decodes zigzag: 0, -1, 1, -2, ... from 0, 1, 2, 3, ...
    @inline(__always)
    static func zigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
    }

    /// The bounds of a length-delimited field's payload, which the reader steps over.
    mutating func lengthDelimitedRange() throws -> Range<Int> {
        let at = position
        let length = try varint()
        guard length <= UInt64(end - position) else {
            throw ProtobufError(
                position: at, reason: "length \(length) runs past the end of the message (\(end - position) bytes left)"
            )
        }
        let start = position
        position += Int(length)
        return start..<position
    }

    /// A sub-reader over a length-delimited field (an embedded message or a packed array).
    mutating func message() throws -> ProtobufReader {
        let range = try lengthDelimitedRange()
        return ProtobufReader(base: base, start: range.lowerBound, end: range.upperBound)
    }

    /// A length-delimited field as UTF-8 text (invalid sequences are replaced, never a failure).
    mutating func string() throws -> String {
        let range = try lengthDelimitedRange()
        return String(decoding: UnsafeBufferPointer(rebasing: base[range]), as: UTF8.self)
    }

    /// A length-delimited field's bytes, copied.
    mutating func bytes() throws -> [UInt8] {
        Array(UnsafeBufferPointer(rebasing: base[try lengthDelimitedRange()]))
    }

    /// Steps over a field's payload.
    mutating func skip(_ wireType: WireType) throws {
        switch wireType {
        case .varint: _ = try varint()
        case .fixed64: try advance(8)
        case .fixed32: try advance(4)
        case .lengthDelimited: _ = try lengthDelimitedRange()
        }
    }

    private mutating func advance(_ count: Int) throws {
        guard end - position >= count else {
            throw ProtobufError(position: position, reason: "fixed-width field runs past the end of the message")
        }
        position += count
    }

    /// Throws unless a field arrived with the wire type its schema gives it.
    func expect(_ wireType: WireType, _ actual: WireType, field: Int, in message: String) throws {
        guard wireType == actual else {
            throw ProtobufError(
                position: position,
                reason: "\(message) field \(field) has wire type \(actual.rawValue), expected \(wireType.rawValue)")
        }
    }

    /// Appends a repeated varint field, packed (wire type 2) or one element at a time (wire type 0), decoded by
    /// `transform`.
    mutating func appendRepeated<T>(
        _ wireType: WireType, to array: inout [T], field: Int, in message: String,
        _ transform: (UInt64) -> T
    ) throws {
        switch wireType {
        case .varint:
            array.append(transform(try varint()))
        case .lengthDelimited:
            var packed = try self.message()
            while !packed.isAtEnd { array.append(transform(try packed.varint())) }
        default:
            throw ProtobufError(
                position: position,
                reason: "\(message) field \(field) has wire type \(wireType.rawValue), expected a packed varint array")
        }
    }
}
