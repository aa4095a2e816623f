public import Foundation
public import EnRouteDomain
public import RedisKit
import EnRouteModels

/// The live bus between nodes on Redis streams: one stream per city, `<prefix>:live:<city>`, each entry one
/// `BusEnvelope` as JSON in the field `e`, trimmed to about `retention` entries.
///
/// A subscription reads with `XREAD BLOCK` on a connection of its own, starting `overlap` before the server's clock
/// at the moment it begins, so nothing published around the subscribe (while the subscriber resynchronises from the
/// store) is missed; what it reads twice is a version or a fix the receiver already holds and drops. A lost server
/// ends the subscription by throwing (the fan-out then subscribes again and resynchronises); a failed publish throws,
/// and the version stays in the outbox for the next attempt.
public final class RedisLiveBus: LiveBus {
    private let configuration: RedisConfiguration
    private let redis: RedisConnection
    private let prefix: String
    private let retention: Int
    private let overlap: Duration
    private let block: Duration

    /// A bus on the Redis of `configuration`, under keys starting `prefix:live:`.
    public init(_ configuration: RedisConfiguration, prefix: String = "enroute", retention: Int = 100_000,
                overlap: Duration = .seconds(5), block: Duration = .seconds(5)) {
        self.configuration = configuration
        redis = RedisConnection(configuration)
        self.prefix = prefix; self.retention = retention; self.overlap = overlap; self.block = block
    }

    /// The stream of `city`.
    public func streamKey(_ city: String) -> String { "\(prefix):live:\(city)" }

    public func publish(_ envelopes: [BusEnvelope]) async throws {
        guard !envelopes.isEmpty else { return }
        let commands: [RedisCommand] = try envelopes.map { envelope in
            RedisCommand([Array("XADD".utf8), Array(streamKey(envelope.city).utf8), Array("MAXLEN".utf8), Array("~".utf8),
                          Array(String(retention).utf8), Array("*".utf8), Array("e".utf8), Array(try WireCoding.encoder().encode(envelope))])
        }
        for reply in try await redis.pipeline(commands) {
            if case .error(let message) = reply { throw RedisServerError(message: message) }
        }
    }

    public func subscribe(cities: [String]) -> AsyncThrowingStream<BusEnvelope, any Error> {
        let (stream, continuation) = AsyncThrowingStream<BusEnvelope, any Error>.makeStream()
        let configuration = self.configuration, keys = cities.map(streamKey), overlap = self.overlap, block = self.block
        let reader = Task {
            do {
                let start = try await Self.serverTime(configuration).subtracting(overlap)
                for try await message in RedisStreamReader(configuration, streams: keys.map { ($0, start) }, block: block) {
                    guard let payload = message.entry.fields.first(where: { $0.name == "e" })?.value else { continue }
                    // An entry this version cannot read is skipped, not fatal: another node may run a newer release.
                    guard let envelope = try? WireCoding.decoder().decode(BusEnvelope.self, from: Data(payload)) else { continue }
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

    /// The stream id of the server's clock now (`TIME`), on a connection of its own.
    static func serverTime(_ configuration: RedisConfiguration) async throws -> RedisStreamID {
        let connection = RedisConnection(configuration)
        defer { Task { await connection.close() } }
        let reply = try await connection.send(["TIME"])
        guard case .array(let parts) = reply, parts.count == 2, let seconds = parts[0].string.flatMap(UInt64.init),
              let micros = parts[1].string.flatMap(UInt64.init) else {
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
