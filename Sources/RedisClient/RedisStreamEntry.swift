/// One entry of a stream: its id and its field-value pairs, in the order they were added.
public struct RedisStreamEntry: Sendable, Equatable {
    /// The entry's id.
    public var id: RedisStreamID
    /// The fields and their values.
    public var fields: [Field]

    /// One field-value pair.
    public struct Field: Sendable, Equatable {
        /// The field's name.
        public var name: String
        /// Its value, binary safe.
        public var value: [UInt8]

        /// The pair `name`=`value`.
        public init(_ name: String, _ value: [UInt8]) {
            self.name = name
            self.value = value
        }
    }

    /// An entry `id` with `fields`.
    public init(id: RedisStreamID, fields: [Field]) {
        self.id = id
        self.fields = fields
    }

    /// The value of the first field called `name`.
    public subscript(name: String) -> [UInt8]? { fields.first { $0.name == name }?.value }

    /// Reads `[id, [field, value, …]]` as XREAD and XRANGE answer it.
    init(_ reply: RESPValue) throws(RedisClientError) {
        guard case .array(let parts) = reply, parts.count == 2, let idText = parts[0].string,
            let id = RedisStreamID(idText),
            case .array(let flat) = parts[1], flat.count.isMultiple(of: 2)
        else {
            throw .unexpectedReply(command: "XREAD", expected: "[id, [field, value, …]]", got: reply)
        }
        var fields: [Field] = []
        for index in stride(from: 0, to: flat.count, by: 2) {
            guard let name = flat[index].string, let value = flat[index + 1].bytes else {
                throw .unexpectedReply(command: "XREAD", expected: "field and value strings", got: reply)
            }
            fields.append(Field(name, value))
        }
        self.init(id: id, fields: fields)
    }
}

/// An entry read from one of several streams.
public struct RedisStreamMessage: Sendable, Equatable {
    /// The stream's key.
    public var stream: String
    /// The entry.
    public var entry: RedisStreamEntry

    /// The entry `entry` of `stream`.
    public init(stream: String, entry: RedisStreamEntry) {
        self.stream = stream
        self.entry = entry
    }
}
