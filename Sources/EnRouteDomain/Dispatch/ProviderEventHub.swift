import Foundation
import EnRouteModels
import Synchronization

/// One event on a provider's live stream (`GET /v1/provider/events`).
public struct ProviderEvent: Sendable, Equatable {
    /// `offer`, `offerWithdrawn` or `tripUpdated`.
    public let name: String
    /// Grows with every event the hub sends.
    public let id: String
    /// The event's JSON.
    public let data: [UInt8]
}

/// Fans events out to each provider's open streams: offers, withdrawals and their trips' changes.
///
/// Each stream has a bounded buffer; one that falls that far behind loses its oldest events and
/// catches up on reconnect, which starts with the live offer and the active trips again.
public final class ProviderEventHub: Sendable {
    private let streams = Mutex<[String: [UInt64: AsyncStream<ProviderEvent>.Continuation]]>([:])
    private let nextStream = Atomic<UInt64>(0)
    private let nextEvent = Atomic<UInt64>(0)
    private let bufferSize: Int

    public init(bufferSize: Int = 256) { self.bufferSize = bufferSize }

    /// Events for `provider` from now on; ends when the caller stops iterating.
    public func subscribe(_ provider: String) -> AsyncStream<ProviderEvent> {
        let (stream, continuation) = AsyncStream<ProviderEvent>.makeStream(
            bufferingPolicy: .bufferingNewest(bufferSize))
        let key = nextStream.wrappingAdd(1, ordering: .relaxed).newValue
        streams.withLock { $0[provider, default: [:]][key] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.streams.withLock { all in
                all[provider]?[key] = nil
                if all[provider]?.isEmpty == true { all[provider] = nil }
            }
        }
        return stream
    }

    /// An event with a fresh id (also used for a stream's opening resync).
    public func event(_ name: String, _ payload: some Encodable) -> ProviderEvent {
        let id = nextEvent.wrappingAdd(1, ordering: .relaxed).newValue
        let data = (try? WireCoding.encoder().encode(payload)).map(Array.init) ?? Array("null".utf8)
        return ProviderEvent(name: name, id: String(id), data: data)
    }

    /// Sends an event to every open stream of `provider`.
    public func send(_ name: String, _ payload: some Encodable, to provider: String) {
        let targets = streams.withLock { $0[provider].map { Array($0.values) } ?? [] }
        guard !targets.isEmpty else { return }
        let event = event(name, payload)
        for target in targets { target.yield(event) }
    }

    /// Sends an event already encoded (one another node made) to every open stream of `provider` here.
    public func deliver(_ name: String, data: [UInt8], to provider: String) {
        let targets = streams.withLock { $0[provider].map { Array($0.values) } ?? [] }
        guard !targets.isEmpty else { return }
        let event = ProviderEvent(
            name: name, id: String(nextEvent.wrappingAdd(1, ordering: .relaxed).newValue), data: data)
        for target in targets { target.yield(event) }
    }

    /// How many streams `provider` has open.
    public func streamCount(_ provider: String) -> Int { streams.withLock { $0[provider]?.count ?? 0 } }
}
