public import Foundation
public import EnRouteModels
import Synchronization

/// What one node tells the others so that every node's watchers, caches and provider streams follow every change:
/// committed trip versions, relayed from the store's outbox, and kept fixes, which are never stored as versions.
public enum LiveMessage: Sendable, Equatable, Codable {
    /// A committed version of a trip.
    case trip(TripRecord)
    /// A provider's kept fixes on a trip, oldest first.
    case fixes(provider: String, fixes: [LocationFix])
    /// A provider became findable in the city (went online, or posted a fix): searches waiting for supply on every node
    /// look again. Where providers are is in the provider locations the nodes share, not in this message.
    case supplyChanged
    /// An event for a provider's live streams, wherever they are open (an offer, its withdrawal).
    case providerEvent(provider: String, name: String, data: [UInt8])
    /// An offer ended on this node (accepted, declined, withdrawn); the node running its search moves on.
    case offerEnded(tripId: String, offerId: String, ending: OfferEnding)
    /// A node committed versions of the city this stream carries: the node holding the city's relay lease looks at the
    /// outbox now.
    case relayDue
}

/// Tells the other nodes of a deployment what they cannot learn from the store: that supply changed, providers'
/// streams'
/// events, and offers that ended. Best effort: what is lost is superseded (a wake-up by the search's deadline, a
/// position
/// by the next) or timed out (an offer).
public protocol PeerChannel: Sendable {
    /// Sends `message` to the other nodes on `city`'s stream, without waiting.
    func share(_ message: LiveMessage, city: String)
}

/// A live message with the node that sent it and the city whose stream carries it.
public struct BusEnvelope: Sendable, Equatable, Codable {
    /// The sending node's id: a node skips its own messages (it applied them when it made them).
    public let origin: String
    public let city: String
    public let message: LiveMessage
    /// A relayed version's number in its city's relay order (the outbox stamp, the stream id); nil for best-effort
    /// messages.
    public var sequence: UInt64?
    public init(origin: String, city: String, message: LiveMessage, sequence: UInt64? = nil) {
        self.origin = origin; self.city = city; self.message = message; self.sequence = sequence
    }
}

/// Carries live messages between the nodes of one deployment: one ordered stream per city.
///
/// An envelope with a `sequence` goes on its city's stream at that id and is refused when the stream already holds
/// that id or a higher one: a relay's retry (after a lost answer, or by a node whose lease was taken) publishes nothing
/// twice.
public protocol LiveBus: Sendable {
    /// Appends `envelopes` to their cities' streams, in order, and returns how many sequenced ones were refused as
    /// already published; throws when the bus cannot be reached (nothing is lost: a trip version stays in the outbox
    /// until a publish succeeds).
    @discardableResult
    func publish(_ envelopes: [BusEnvelope]) async throws -> Int
    /// Every envelope published on `cities`' streams from now on. The sequence throws when the bus is lost; the
    /// subscriber then resynchronises from the store and subscribes again.
    func subscribe(cities: [String]) -> AsyncThrowingStream<BusEnvelope, any Error>
}

/// The live bus of several nodes in one process (tests, `enroute simulate`): every subscriber gets every envelope of
/// its cities.
public final class InMemoryLiveBus: LiveBus {
    private struct Subscriber {
        let cities: Set<String>
        let continuation: AsyncThrowingStream<BusEnvelope, any Error>.Continuation
    }
    private struct Streams {
        var subscribers: [UInt64: Subscriber] = [:]
        /// The highest sequence published on each city's stream.
        var tops: [String: UInt64] = [:]
    }
    private let streams = Mutex(Streams())
    private let nextID = Atomic<UInt64>(0)
    private let down = Atomic<Bool>(false)

    public init() {}

    @discardableResult
    public func publish(_ envelopes: [BusEnvelope]) async throws -> Int {
        guard !down.load(ordering: .acquiring) else { throw LiveBusUnavailable("the in-memory bus is down") }
        // Under the lock: two publishers' sequenced envelopes reach every subscriber in sequence order.
        return streams.withLock { s in
            var refused = 0
            for envelope in envelopes {
                if let sequence = envelope.sequence {
                    guard sequence > s.tops[envelope.city, default: 0] else { refused += 1; continue }
                    s.tops[envelope.city] = sequence
                }
                for target in s.subscribers.values where target.cities.contains(envelope.city) {
                    target.continuation.yield(envelope)
                }
            }
            return refused
        }
    }

    public func subscribe(cities: [String]) -> AsyncThrowingStream<BusEnvelope, any Error> {
        let (stream, continuation) = AsyncThrowingStream<BusEnvelope, any Error>.makeStream()
        guard !down.load(ordering: .acquiring) else {
            continuation.finish(throwing: LiveBusUnavailable("the in-memory bus is down"))
            return stream
        }
        let key = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        streams.withLock { $0.subscribers[key] = Subscriber(cities: Set(cities), continuation: continuation) }
        continuation.onTermination = { [weak self] _ in
            _ = self?.streams.withLock { $0.subscribers.removeValue(forKey: key) }
        }
        return stream
    }

    /// How many subscriptions are open (a node reads the bus once its count is there).
    public var subscriberCount: Int { streams.withLock { $0.subscribers.count } }

    /// Loses the bus, as a Redis restart does: every subscription ends with an error and publishes fail until
    /// `restore()`.
    public func fail() {
        down.store(true, ordering: .releasing)
        let all = streams.withLock { s in
            defer { s.subscribers.removeAll() }; return Array(s.subscribers.values)
        }
        for subscriber in all {
            subscriber.continuation.finish(throwing: LiveBusUnavailable("the in-memory bus went down"))
        }
    }

    /// Brings the bus back after `fail()`.
    public func restore() { down.store(false, ordering: .releasing) }
}

/// The live bus cannot be reached now.
public struct LiveBusUnavailable: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { "live bus unavailable: \(reason)" }
}
