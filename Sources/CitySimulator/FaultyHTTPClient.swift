public import Foundation
public import HTTPTransport

/// Whether faults are being injected right now; the run turns them off for its final drain.
public final class FaultSwitch: Sendable {
    private let on = Locked(true)
    /// Faults on.
    public init() {}
    /// Whether faults apply.
    public var isOn: Bool { on.withLock { $0 } }
    /// Turns faults on or off for every client.
    public func set(_ value: Bool) { on.withLock { $0 = value } }
}

/// One device's network: requests go to `inner` unless the fault plan loses them (a share, drawn from the device's
/// seeded generator) or the device is in a dead zone. A lost or partitioned request fails like a dropped connection.
/// Every request attempted is told to `observe` (method, path) first.
public final class FaultyHTTPClient: HTTPClient {
    private let inner: any HTTPClient
    private let plan: FaultPlan
    private let phase: Double
    private let second: @Sendable () -> Double
    private let faults: FaultSwitch
    private let generator: Locked<SeededGenerator>
    private let observe: @Sendable (_ method: String, _ path: String) -> Void

    /// A device network over `inner`; `second` tells the run's simulated second, `phase` shifts this device's dead
    /// zones.
    public init(
        inner: any HTTPClient, plan: FaultPlan, phase: Double, generator: SeededGenerator, faults: FaultSwitch,
        second: @escaping @Sendable () -> Double, observe: @escaping @Sendable (String, String) -> Void = { _, _ in }
    ) {
        self.inner = inner; self.plan = plan; self.phase = phase; self.second = second; self.faults = faults
        self.generator = Locked(generator); self.observe = observe
    }

    /// Whether this device is in a dead zone now.
    public var isPartitioned: Bool { faults.isOn && plan.isPartitioned(atSecond: second(), phase: phase) }

    /// Nil when the request goes through, else the failure it meets.
    func fault() -> HTTPClientError? {
        guard faults.isOn else { return nil }
        if plan.isPartitioned(atSecond: second(), phase: phase) { return .network("simulated dead zone") }
        if plan.loss > 0, generator.withLock({ $0.unit() }) < plan.loss { return .network("simulated packet loss") }
        return nil
    }

    public func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        // Every attempt counts (a poll the network loses still cost the battery).
        observe(request.method, request.url.path)
        if let fault = fault() { throw fault }
        return try await inner.send(request)
    }

    public func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        observe(request.method, request.url.path)
        if let fault = fault() { return AsyncThrowingStream { $0.finish(throwing: fault) } }
        let upstream = inner.events(request)
        let (stream, continuation) = AsyncThrowingStream<ServerSentEvent, any Error>.makeStream()
        // A dead zone that begins while the stream is open cuts it at its next event.
        let pump = Task { [self] in
            do {
                for try await event in upstream {
                    if isPartitioned {
                        continuation.finish(throwing: HTTPClientError.network("simulated dead zone")); return
                    }
                    continuation.yield(event)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in pump.cancel() }
        return stream
    }
}
