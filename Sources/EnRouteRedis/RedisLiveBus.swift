public import Foundation
public import EnRouteDomain
public import RedisClient
import EnRouteModels

/// The live bus between nodes on Redis streams, two per city, each entry one `BusEnvelope` as JSON in the field `e`,
/// trimmed to about `retention` entries: relayed versions on `<prefix>:versions:<city>` at the ids of their relay
/// numbers (`<sequence>-0`), which Redis refuses once the stream is at or past them (a relay's retry is counted as
/// already published, not added again); best-effort messages (fixes, presence, provider events) on
/// `<prefix>:live:<city>` at Redis's own ids.
///
/// A subscription reads with `XREAD BLOCK` on a connection of its own, starting a little before the moment it begins so
/// that nothing published around the subscribe (while the subscriber resynchronises from the store) is missed: the
/// versions streams `versionsOverlap` numbers before their newest entry, the others `overlap` before the server's
/// clock; what it reads twice is a version or a fix the receiver already holds and drops. A lost server ends the
/// subscription by throwing (the fan-out then subscribes again and resynchronises); a failed publish throws, and the
/// version stays in the outbox for the next attempt. A versions stream must not outlive its store: the relay numbers of
/// a fresh store start
/// at 1 again, and Redis would refuse them as published.
public final class RedisLiveBus: LiveBus {
    private let configuration: RedisConfiguration
    private let redis: RedisConnection
    private let prefix: String
    private let retention: Int
    private let overlap: Duration
    private let versionsOverlap: UInt64
    private let block: Duration

    /// A bus on the Redis of `configuration`, under keys starting `prefix:live:` and `prefix:versions:`.
    public init(
        _ configuration: RedisConfiguration, prefix: String = "enroute", retention: Int = 100_000,
        overlap: Duration = .seconds(5), versionsOverlap: UInt64 = 1_000, block: Duration = .seconds(5)
    ) {
        self.configuration = configuration
        redis = RedisConnection(configuration)
        self.prefix = prefix; self.retention = retention; self.overlap = overlap;
        self.versionsOverlap = versionsOverlap; self.block = block
    }

    /// The stream of `city`'s best-effort messages.
    public func streamKey(_ city: String) -> String { "\(prefix):live:\(city)" }

    /// The stream of `city`'s relayed versions, at the ids of their relay numbers.
    public func versionsKey(_ city: String) -> String { "\(prefix):versions:\(city)" }

    @discardableResult
    public func publish(_ envelopes: [BusEnvelope]) async throws -> Int {
        guard !envelopes.isEmpty else { return 0 }
        let commands: [RedisCommand] = try envelopes.map { envelope in
            let key = envelope.sequence == nil ? streamKey(envelope.city) : versionsKey(envelope.city)
            let id = envelope.sequence.map { RedisStreamID(outboxSequence: $0).description } ?? "*"
            return RedisCommand([
                Array("XADD".utf8), Array(key.utf8), Array("MAXLEN".utf8), Array("~".utf8),
                Array(String(retention).utf8), Array(id.utf8), Array("e".utf8),
                Array(try WireCoding.encoder().encode(envelope)),
            ])
        }
        var refused = 0
        for reply in try await redis.pipeline(commands) {
            guard case .error(let message) = reply else { continue }
            // The stream holds this number or a later one already: published before (a retry, or another relay's copy).
            if message.contains("equal or smaller than the target stream top item") { refused += 1; continue }
            throw RedisServerError(message: message)
        }
        return refused
    }

    public func subscribe(cities: [String]) -> AsyncThrowingStream<BusEnvelope, any Error> {
        let (stream, continuation) = AsyncThrowingStream<BusEnvelope, any Error>.makeStream()
        let configuration = self.configuration, keys = cities.map(streamKey), versions = cities.map(versionsKey)
        let overlap = self.overlap, versionsOverlap = self.versionsOverlap, block = self.block
        let reader = Task {
            do {
                let start = try await Self.serverTime(configuration).subtracting(overlap)
                // A city's numbers have no holes, so `versionsOverlap` numbers back are that many entries back.
                let tops = try await Self.lastIDs(versions, configuration)
                    .map {
                        RedisStreamID(
                            outboxSequence: $0.milliseconds > versionsOverlap ? $0.milliseconds - versionsOverlap : 0)
                    }
                let positions = keys.map { (key: $0, after: start) } + zip(versions, tops).map { (key: $0, after: $1) }
                for try await message in RedisStreamReader(configuration, streams: positions, block: block) {
                    guard let payload = message.entry.fields.first(where: { $0.name == "e" })?.value else { continue }
                    // An entry this version cannot read is skipped, not fatal: another node may run a newer release.
                    guard let envelope = try? WireCoding.decoder().decode(BusEnvelope.self, from: Data(payload)) else {
                        continue
                    }
                    continuation.yield(envelope)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in reader.cancel() }
        return stream
    }

    /// The newest entry's id of each of `keys` (`.zero` for an empty one), on a connection of its own.
    static func lastIDs(_ keys: [String], _ configuration: RedisConfiguration) async throws -> [RedisStreamID] {
        let connection = RedisConnection(configuration)
        defer { Task { await connection.close() } }
        var ids: [RedisStreamID] = []
        for key in keys { ids.append(try await connection.lastStreamID(key)) }
        return ids
    }

    /// The stream id of the server's clock now (`TIME`), on a connection of its own.
    static func serverTime(_ configuration: RedisConfiguration) async throws -> RedisStreamID {
        let connection = RedisConnection(configuration)
        defer { Task { await connection.close() } }
        let reply = try await connection.send(["TIME"])
        guard case .array(let parts) = reply, parts.count == 2, let seconds = parts[0].string.flatMap(UInt64.init),
            let micros = parts[1].string.flatMap(UInt64.init)
        else {
            throw RedisClientError.unexpectedReply(command: "TIME", expected: "seconds and microseconds", got: reply)
        }
        return RedisStreamID(milliseconds: seconds * 1000 + micros / 1000)
    }
}

extension RedisStreamID {
    /// The id `duration` earlier (never below zero).
    func subtracting(_ duration: Duration) -> RedisStreamID {
        let (seconds, attoseconds) = duration.components
        let ms = UInt64(max(0, seconds)) * 1000 + UInt64(max(0, attoseconds)) / 1_000_000_000_000_000
        return RedisStreamID(milliseconds: milliseconds > ms ? milliseconds - ms : 0)
    }
}
