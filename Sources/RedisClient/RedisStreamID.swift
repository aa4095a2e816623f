/// A stream entry's id, `<milliseconds>-<sequence>`. EnRoute's streams use `<outbox seq>-0`, so that a relay's
/// retry of an id already in the stream is refused by Redis.
public struct RedisStreamID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The first part (Redis's milliseconds; EnRoute's outbox sequence).
    public var milliseconds: UInt64
    /// The second part.
    public var sequence: UInt64

    /// The id `milliseconds-sequence`.
    public init(milliseconds: UInt64, sequence: UInt64 = 0) {
        self.milliseconds = milliseconds
        self.sequence = sequence
    }

    /// The id `seq-0` for an outbox sequence number.
    public init(outboxSequence: UInt64) { self.init(milliseconds: outboxSequence) }

    /// Parses `a-b` (or `a`, meaning `a-0`); nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let first = UInt64(parts[0]) else { return nil }
        guard parts.count == 1 || UInt64(parts[1]) != nil else { return nil }
        self.init(milliseconds: first, sequence: parts.count == 2 ? UInt64(parts[1])! : 0)
    }

    /// `0-0`: before every entry (read a stream from its start).
    public static let zero = RedisStreamID(milliseconds: 0)

    public var description: String { "\(milliseconds)-\(sequence)" }

    public static func < (lhs: RedisStreamID, rhs: RedisStreamID) -> Bool {
        (lhs.milliseconds, lhs.sequence) < (rhs.milliseconds, rhs.sequence)
    }
}
