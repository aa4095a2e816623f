import Foundation
import HTTPTransport
import EnRouteModels
import OrderTracking

/// One customer ordering through the API and watching through OrderTracking: the repository, the store, the polling
/// engine at the kit's cadence, the live loop in the foreground, the tracking screen's view model; now and then the
/// app goes to the background and back. What the screen shows is sampled every simulated second.
@MainActor
final class SimulatedShopper {
    let account: String
    private let context: SimulationContext
    private let stage = StageBox()
    private var network: FaultyHTTPClient!
    private let server: APIServer
    private var random: SeededGenerator
    private let freshness = TrackingFreshnessPolicy(
        locale: Locale(identifier: "en_US_POSIX"), timeZone: TimeZone(identifier: "UTC")!)
    /// A Live Activity's content goes stale this long after its snapshot (OrderLiveActivityEngine's default).
    static let liveActivityStaleAfter: TimeInterval = 180

    init(account: String, context: SimulationContext) throws {
        self.account = account
        self.context = context
        server = try context.server(account, .customer)
        random = SeededGenerator(seed: context.seed, stream: "shopper:" + account)
        let stage = self.stage, log = context.log
        network = context.network(for: account) { method, path in
            guard method == "GET", path.hasPrefix("/v1/orders/"), path.hasSuffix("/tracking") else { return }
            let current = stage.value.withLock { $0 }
            log.record { $0.polls[current, default: 0] += 1 }
        }
    }

    /// One order from `merchant` to `destination`, watched to its end (or the run's).
    func order(from merchant: SimulatedMerchant, to destination: Coordinate) async {
        let log = context.log
        guard let orderID = await place(merchant, destination) else { return }
        log.record {
            $0.ordersPlaced += 1; $0.tripIDs.append(orderID)
        }
        let order = OrderID(orderID)
        let repository = RemoteOrderTrackingRepository(http: network, server: server, clock: context.clock)
        let store = OrderTrackingStore(tracking: repository)
        let lifecycle = ManualAppLifecycle(phase: .foreground)
        let engine = TrackingPollingEngine(
            tracking: repository, lifecycle: lifecycle, network: ManualNetworkStatus(isOnline: true),
            clock: context.clock)
        let viewModel = OrderTrackingViewModel(
            order: order, store: store, freshness: freshness, clock: context.dates, ticks: context.clock)
        var tasks: [Task<Void, Never>] = [Task { await store.start() }, Task { await viewModel.onAppear() }]
        // Out-of-order answers: snapshots that arrive with a lower version than one already seen.
        tasks.append(
            Task {
                var newest = Int.min
                for await snapshot in repository.snapshots() where snapshot.orderID == order {
                    if snapshot.version < newest { log.record { $0.outOfOrderDrops += 1 } }
                    newest = max(newest, snapshot.version)
                }
            })
        var live: Task<Void, Never>? = Self.liveLoop(repository, order, context: context)
        engine.start()
        engine.follow(order)
        defer {
            engine.stop(); live?.cancel(); viewModel.onDisappear()
            for task in tasks { task.cancel() }
        }
        // A third of customers put the app away once, for one to five minutes, and come back.
        let awayAt: Double? = random.unit() < 0.35 ? 60 + 400 * random.unit() : nil
        let awayFor = 60 + 240 * random.unit()
        let cancelAt: Double? = random.unit() < 0.03 ? 30 + 60 * random.unit() : nil
        let placedAt = context.dates.now()
        var sampledAt = placedAt, sampledStage: SimulationObservations.PollStage?
        var lastWindow: ClosedRange<Date>?, firstOnTheWayWindow: ClosedRange<Date>?
        var onTheWayWindows: [ClosedRange<Date>: Int] = [:]
        while !Task.isCancelled {
            guard await context.pause(1) else { return }
            let now = context.dates.now(), elapsed = now.timeIntervalSince(placedAt)
            if let awayAt {
                let away = elapsed >= awayAt && elapsed < awayAt + awayFor
                if away, lifecycle.phase == .foreground { lifecycle.set(.background); live?.cancel(); live = nil }
                if !away, lifecycle.phase != .foreground {
                    lifecycle.set(.foreground); live = Self.liveLoop(repository, order, context: context)
                }
            }
            // Order-minutes by the simulated time that passed in each stage (a busy run may wake this loop late).
            let passed = now.timeIntervalSince(sampledAt)
            sampledAt = now
            if let sampledStage { log.record { $0.orderMinutes[sampledStage, default: 0] += passed / 60 } }
            guard case .loaded(let snapshot) = store.state(of: order) else { continue }
            let foreground = lifecycle.phase == .foreground
            let current: SimulationObservations.PollStage =
                !foreground
                ? .background
                : (snapshot.status == .onTheWay || snapshot.status == .arriving ? .onTheWay : .picking)
            stage.value.withLock { $0 = current }
            sampledStage = snapshot.status.isTerminal ? nil : current
            if snapshot.status.isTerminal {
                if snapshot.status == .delivered {
                    var arrival = SimulationObservations.OrderArrival(
                        lastWindow: lastWindow, firstOnTheWayWindow: firstOnTheWayWindow,
                        deliveredAt: snapshot.generatedAt, onTheWayWindows: onTheWayWindows)
                    log.record { seen in
                        arrival.arrivedAt = seen.doorArrivals[orderID]
                        seen.ordersDelivered += 1; seen.orderArrivals.append(arrival); seen.paidTripIDs.append(orderID)
                    }
                } else {
                    log.record { $0.ordersCancelled += 1 }
                }
                return
            }
            let staleActivity = now > snapshot.generatedAt.addingTimeInterval(Self.liveActivityStaleAfter)
            log.record { seen in
                seen.liveActivityRenders += 1
                if staleActivity { seen.liveActivityStale += 1 }
            }
            guard foreground else { continue }
            // What the screen draws now.
            let state = viewModel.viewState
            let age = now.timeIntervalSince(snapshot.generatedAt)
            var pinAge: Double?
            if case .live(let fix) = state.riderPin { pinAge = now.timeIntervalSince(fix.recordedAt) }
            if case .window(let window) = freshness.eta(snapshot.eta, generatedAt: snapshot.generatedAt, now: now) {
                lastWindow = window
                if firstOnTheWayWindow == nil, snapshot.status == .onTheWay { firstOnTheWayWindow = window }
                if snapshot.status == .onTheWay || snapshot.status == .arriving {
                    onTheWayWindows[window, default: 0] += 1
                }
            }
            log.record { seen in
                seen.snapshotAgesShown.append(age)
                if let pinAge { seen.livePinAges.append(pinAge) }
            }
            if let cancelAt, elapsed > cancelAt, snapshot.status == .placed {
                _ = try? await network.send(
                    await server.request("POST", APIPath.orderCancel(orderID), body: Data("{}".utf8)))
            }
        }
    }

    /// The kit's live loop (SSE) while the app is open, reopened after a pause when the network drops it.
    private static func liveLoop(
        _ repository: RemoteOrderTrackingRepository, _ order: OrderID, context: SimulationContext
    ) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                try? await repository.followEvents(of: order)
                guard await context.pause(5) else { return }
            }
        }
    }

    /// Saves a card, quotes the basket and places it; the order id, nil when the network or the card kept refusing.
    private func place(_ merchant: SimulatedMerchant, _ destination: Coordinate) async -> String? {
        let items = [
            OrderItem(
                sku: merchant.skus[Int(random.unit() * Double(merchant.skus.count)) % merchant.skus.count],
                quantity: 1 + Int(random.unit() * 2))
        ]
        let card = PaymentMethodRequest(token: "pm_card_visa", makeDefault: true)
        guard await retrying({ try await self.post(APIPath.paymentMethods, card) }) != nil else { return nil }
        let quoteBody = OrderQuoteRequest(merchantId: merchant.id, items: items, destination: destination)
        guard let quoteData = await retrying({ try await self.post(APIPath.orderQuote, quoteBody) }),
            let quote = try? WireCoding.decoder().decode(OrderQuote.self, from: quoteData)
        else { return nil }
        let key = SimulatedRider.uuid("order-" + account).uuidString
        let request = PlaceOrderRequest(
            merchantId: merchant.id, items: items, destination: destination, quoteId: quote.quoteId)
        guard let placed = await retrying({ try await self.post(APIPath.orders, request, key: key) }),
            let object = try? JSONSerialization.jsonObject(with: placed) as? [String: Any]
        else { return nil }
        return object["orderId"] as? String
    }

    private func post(_ path: String, _ body: some Encodable & Sendable, key: String? = nil) async throws -> Data {
        let headers = key.map { ["Idempotency-Key": $0] } ?? [:]
        let response = try await network.send(try await server.request("POST", path, json: body, headers: headers))
        try response.requireSuccess()
        return response.body
    }

    private func retrying<T>(_ body: @escaping () async throws -> T) async -> T? {
        for attempt in 1...5 {
            if let value = try? await body() { return value }
            guard await context.pause(Double(2 * attempt)) else { return nil }
        }
        return nil
    }
}

/// The stage an order is in, shared with the transport that counts its polls.
final class StageBox: Sendable {
    let value = Locked<SimulationObservations.PollStage>(.picking)
}
