public import Foundation
public import HTTPTransport
import EnRouteModels

/// Calls the tracking endpoints, maps `TrackingDTO` to `OrderTracking`, and publishes every snapshot it gets.
///
/// It publishes in arrival order and doesn't judge; judging is `OrderStatusPolicy`'s job, in the store.
public actor RemoteOrderTrackingRepository: OrderTrackingRepository, TrackingRefresher, LiveActivityTokens,
    TrackingStream
{
    private let http: any HTTPClient
    private let server: APIServer
    private let clock: any Clock<Duration>
    private let requestTimeout: Duration
    private let tokenRetryDelays: [Duration]
    private let broadcaster = SnapshotBroadcaster()
    private var tokenGenerations: [OrderID: Int] = [:]

    /// A repository over `http` addressing `server`; `clock` paces token retries.
    public init(
        http: any HTTPClient, server: APIServer, clock: any Clock<Duration>, requestTimeout: Duration = .seconds(5),
        tokenRetryDelays: [Duration] = [.seconds(1), .seconds(2), .seconds(5), .seconds(10), .seconds(30)]
    ) {
        self.http = http
        self.server = server
        self.clock = clock
        self.requestTimeout = requestTimeout
        self.tokenRetryDelays = tokenRetryDelays.isEmpty ? [.seconds(5)] : tokenRetryDelays
    }

    /// Every snapshot fetched, for every order, in arrival order; replays the latest per order on subscribe.
    public nonisolated func snapshots() -> AsyncStream<OrderTracking> {
        broadcaster.subscribe()
    }

    /// GET /v1/orders/active; publishes each order's snapshot.
    @discardableResult
    public func refreshActive() async throws -> [OrderTracking] {
        let request = await server.request("GET", APIPath.activeOrders, timeout: requestTimeout)
        let dto = try await http.send(request).decode(ActiveOrdersDTO.self)
        let snapshots = dto.orders.map(OrderTracking.init)
        for snapshot in snapshots { broadcaster.publish(snapshot) }
        return snapshots
    }

    /// GET /v1/orders/{id}/tracking; publishes the snapshot.
    @discardableResult
    public func refresh(_ order: OrderID) async throws -> OrderTracking {
        let request = await server.request("GET", APIPath.orderTracking(order.rawValue), timeout: requestTimeout)
        let snapshot = OrderTracking(try await http.send(request).decode(TrackingDTO.self))
        broadcaster.publish(snapshot)
        return snapshot
    }

    /// PUT /v1/orders/{id}/live-activity-token, retried until it lands, the order ends or a newer token replaces it.
    public func send(_ token: Data, for order: OrderID) async throws {
        let generation = tokenGenerations[order, default: 0] + 1
        tokenGenerations[order] = generation
        let body = LiveActivityTokenRequest(token: token.map { String(format: "%02x", $0) }.joined())
        var failures = 0
        while true {
            try Task.checkCancellation()
            guard !broadcaster.hasEnded(order), tokenGenerations[order] == generation else { return }
            let wait: Duration
            do {
                let request = try await server.request(
                    "PUT", APIPath.orderLiveActivityToken(order.rawValue), json: body,
                    timeout: requestTimeout)
                let response = try await http.send(request)
                if (200..<300).contains(response.status) { return }
                let error = response.apiError()
                guard Self.isWorthRetrying(response.status) else { throw error }
                wait = retryDelay(after: failures, error: error)
            } catch let error as CancellationError {
                throw error
            } catch let error as APIError {
                throw error
            } catch {
                wait = retryDelay(after: failures, error: error)
            }
            failures += 1
            try await clock.sleep(for: wait, tolerance: nil)
        }
    }

    /// Follows GET /v1/orders/{id}/events (each event's data is a snapshot) until the server or the caller ends it.
    /// A sub-second follow-up to polling, not a replacement.
    public func followEvents(of order: OrderID) async throws {
        let request = await server.request(
            "GET", APIPath.orderEvents(order.rawValue), headers: ["Accept": "text/event-stream"])
        let decoder = WireCoding.decoder()
        for try await event in http.events(request) {
            guard let dto = try? decoder.decode(TrackingDTO.self, from: Data(event.data.utf8)) else { continue }
            broadcaster.publish(OrderTracking(dto))
        }
    }

    private func retryDelay(after failures: Int, error: any Error) -> Duration {
        let step = tokenRetryDelays[min(failures, tokenRetryDelays.count - 1)]
        if case APIError.retryAfter(let wait, _) = error { return max(step, wait) }
        return step
    }

    private static func isWorthRetrying(_ status: Int) -> Bool {
        status == 408 || status == 429 || status >= 500
    }
}
