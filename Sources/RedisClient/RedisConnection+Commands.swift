/// What XADD with an explicit id did.
public enum RedisStreamAppend: Sendable, Equatable {
    /// The entry was added under the id.
    case added(RedisStreamID)
    /// The stream already holds this id or a later one: a retried publish of the same outbox row (Redis refuses
    /// the id as "equal or smaller than the target stream top item"), so there is nothing to add again.
    case alreadyPublished
}

extension RedisConnection {
    /// `PING`: true when the server answers PONG.
    public func ping() async throws -> Bool {
        try await send(["PING"]) == .simple("PONG")
    }

    /// `SET key value [PX ms]`: stores `value`, to expire after `lifetime` (whole milliseconds, at least 1) if given.
    public func set(_ key: String, _ value: [UInt8], expiresAfter lifetime: Duration? = nil) async throws {
        var arguments: [[UInt8]] = [Array("SET".utf8), Array(key.utf8), value]
        if let lifetime { arguments += [Array("PX".utf8), Array(String(Self.milliseconds(lifetime)).utf8)] }
        let reply = try await send(RedisCommand(arguments))
        guard reply == .simple("OK") else {
            throw RedisClientError.unexpectedReply(command: "SET", expected: "OK", got: reply)
        }
    }

    /// `GET key`: the value, or nil when there is none (or it expired).
    public func get(_ key: String) async throws -> [UInt8]? {
        let reply = try await send(["GET", key])
        switch reply {
        case .bulk(let bytes): return bytes
        case .null: return nil
        default: throw RedisClientError.unexpectedReply(command: "GET", expected: "a bulk string or null", got: reply)
        }
    }

    /// `DEL key…`: how many of the keys existed.
    @discardableResult
    public func delete(_ keys: [String]) async throws -> Int {
        guard !keys.isEmpty else { return 0 }
        return try await integer(RedisCommand(strings: ["DEL"] + keys))
    }

    /// `PEXPIRE key ms` (EXPIRE to the millisecond): false when the key does not exist.
    @discardableResult
    public func expire(_ key: String, after lifetime: Duration) async throws -> Bool {
        try await integer(["PEXPIRE", key, String(Self.milliseconds(lifetime))]) == 1
    }

    /// `GEOADD key lon lat member…`: how many members were new.
    @discardableResult
    public func geoAdd(
        _ key: String, _ members: [(member: String, longitude: Double, latitude: Double)]
    ) async throws -> Int {
        guard !members.isEmpty else { return 0 }
        var arguments = ["GEOADD", key]
        for member in members { arguments += [String(member.longitude), String(member.latitude), member.member] }
        return try await integer(RedisCommand(strings: arguments))
    }

    /// `GEOSEARCH key FROMLONLAT lon lat BYRADIUS r m ASC WITHDIST COUNT n`: the nearest members within
    /// `radiusMeters`, nearest first, at most `count`; none when the key does not exist.
    public func geoSearch(
        _ key: String, longitude: Double, latitude: Double, radiusMeters: Double, count: Int
    ) async throws -> [RedisGeoMatch] {
        let reply = try await send(
            RedisCommand(strings: [
                "GEOSEARCH", key, "FROMLONLAT", String(longitude), String(latitude),
                "BYRADIUS", String(radiusMeters), "m", "ASC", "WITHDIST", "COUNT", String(count),
            ]))
        guard case .array(let items) = reply else {
            throw RedisClientError.unexpectedReply(command: "GEOSEARCH", expected: "an array", got: reply)
        }
        return try items.map { item in
            guard case .array(let pair) = item, pair.count == 2, let member = pair[0].string,
                let distance = pair[1].string.flatMap(Double.init)
            else {
                throw RedisClientError.unexpectedReply(command: "GEOSEARCH", expected: "[member, distance]", got: item)
            }
            return RedisGeoMatch(member: member, distanceMeters: distance)
        }
    }

    /// `XADD stream [MAXLEN ~ n] id field value…` with an explicit id; an id the stream is already at or past is
    /// `.alreadyPublished`, not an error.
    public func xAdd(
        _ stream: String, id: RedisStreamID, fields: [RedisStreamEntry.Field],
        approximateMaxLength: Int? = nil
    ) async throws -> RedisStreamAppend {
        var arguments: [[UInt8]] = [Array("XADD".utf8), Array(stream.utf8)]
        if let approximateMaxLength {
            arguments += [Array("MAXLEN".utf8), Array("~".utf8), Array(String(approximateMaxLength).utf8)]
        }
        arguments.append(Array(id.description.utf8))
        for field in fields { arguments += [Array(field.name.utf8), field.value] }
        do {
            let reply = try await send(RedisCommand(arguments))
            guard let text = reply.string, let added = RedisStreamID(text) else {
                throw RedisClientError.unexpectedReply(command: "XADD", expected: "the entry's id", got: reply)
            }
            return .added(added)
        } catch let error as RedisServerError
            where error.message.contains("equal or smaller than the target stream top item")
        {
            return .alreadyPublished
        }
    }

    /// `XREAD [COUNT n] [BLOCK ms] STREAMS key… id…`: the entries after each stream's id, in stream order, at most
    /// `count` a stream; with `block`, waits that long for one to arrive (none then: empty).
    public func xRead(
        _ streams: [(key: String, after: RedisStreamID)], count: Int? = nil, block: Duration? = nil
    ) async throws -> [RedisStreamMessage] {
        guard !streams.isEmpty else { return [] }
        var arguments = ["XREAD"]
        if let count { arguments += ["COUNT", String(count)] }
        if let block { arguments += ["BLOCK", String(Self.milliseconds(block))] }
        arguments.append("STREAMS")
        arguments += streams.map(\.key)
        arguments += streams.map(\.after.description)
        let command = RedisCommand(strings: arguments)
        let reply = if let block { try await send(command, blockingFor: block) } else { try await send(command) }
        return try Self.streamMessages(reply)
    }

    /// The id of the newest entry of `stream` (`XREVRANGE stream + - COUNT 1`), `.zero` when it is empty or absent:
    /// where a reader that wants only new entries starts.
    public func lastStreamID(_ stream: String) async throws -> RedisStreamID {
        let reply = try await send(["XREVRANGE", stream, "+", "-", "COUNT", "1"])
        guard case .array(let entries) = reply else {
            throw RedisClientError.unexpectedReply(command: "XREVRANGE", expected: "an array", got: reply)
        }
        return try entries.first.map { try RedisStreamEntry($0).id } ?? .zero
    }

    /// `EVAL script numkeys key… arg…`: the script's reply.
    public func eval(_ script: String, keys: [String] = [], arguments: [[UInt8]] = []) async throws -> RESPValue {
        try await send(
            RedisCommand(
                [Array("EVAL".utf8), Array(script.utf8), Array(String(keys.count).utf8)] + keys.map { Array($0.utf8) }
                    + arguments))
    }

    static func streamMessages(_ reply: RESPValue) throws(RedisClientError) -> [RedisStreamMessage] {
        switch reply {
        case .null: return []
        case .array(let streams):
            var messages: [RedisStreamMessage] = []
            for stream in streams {
                guard case .array(let pair) = stream, pair.count == 2, let key = pair[0].string,
                    case .array(let entries) = pair[1]
                else {
                    throw .unexpectedReply(command: "XREAD", expected: "[stream, [entry…]]", got: stream)
                }
                for entry in entries {
                    messages.append(RedisStreamMessage(stream: key, entry: try RedisStreamEntry(entry)))
                }
            }
            return messages
        default:
            throw .unexpectedReply(command: "XREAD", expected: "an array or null", got: reply)
        }
    }

    private func integer(_ command: RedisCommand) async throws -> Int {
        let reply = try await send(command)
        guard case .integer(let value) = reply else {
            throw RedisClientError.unexpectedReply(command: command.name, expected: "an integer", got: reply)
        }
        return value
    }

    /// Whole milliseconds, rounded up and at least 1 (PX 0 is an error; a lifetime is never shortened).
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let whole = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        let rest = attoseconds % 1_000_000_000_000_000
        return max(1, whole + (rest > 0 ? 1 : 0))
    }
}
