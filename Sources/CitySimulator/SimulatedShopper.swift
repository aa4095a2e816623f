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
            $0.ordersPlaced += 1; $0.tripIDs.append(orderID); $0.orderIDs.append(orderID)
        }
        let order = OrderID(orderID)
        let repository = RemoteOrderTrackingRepository(http: network, server: server, clock: context.clock)
        let store = OrderTrackingStore(tracking: repository)
        let lifecycle = ManualAppLifecycle(phase: .foreground)
        let engine = TrackingPollingEngine(
            tracking: repository, lifecycle: lifecycle, network: ManualNetworkStatus(isOnline: true),
            clock: context.clock)
        let app = ShopperApp(
            repository: repository, order: order, lifecycle: lifecycle, store: store,
            viewModel: OrderTrackingViewModel(
                order: order, store: store, freshness: freshness, clock: context.dates, ticks: context.clock))
        let tasks: [Task<Void, Never>] = [
            Task { await store.start() }, Task { await app.viewModel.onAppear() }, countOutOfOrderDrops(app),
        ]
        var live: Task<Void, Never>? = Self.liveLoop(repository, order, context: context)
        engine.start()
        engine.follow(order)
        defer {
            engine.stop(); live?.cancel(); app.viewModel.onDisappear()
            for task in tasks { task.cancel() }
        }
        await watch(orderID, on: app, live: &live)
    }

    /// What one order's watching holds: the kit's repository and store, the app's lifecycle and the tracking
    /// screen's view model.
    private struct ShopperApp {
        let repository: RemoteOrderTrackingRepository
        let order: OrderID
        let lifecycle: ManualAppLifecycle
        let store: OrderTrackingStore
        let viewModel: OrderTrackingViewModel
    }

    /// What the screen has shown of an order so far: the last arrival window, the first while on the way, and how
    /// often each window was shown on the way.
    private struct ShownWindows {
        var last: ClosedRange<Date>?
        var firstOnTheWay: ClosedRange<Date>?
        var onTheWay: [ClosedRange<Date>: Int] = [:]
        /// The `stopsBefore` values the tracking showed, a repeat kept once.
        var stopsBefore: [Int] = []
    }

    /// Out-of-order answers: snapshots that arrive with a lower version than one already seen.
    private func countOutOfOrderDrops(_ app: ShopperApp) -> Task<Void, Never> {
        let log = context.log, repository = app.repository, order = app.order
        return Task {
            var newest = Int.min
            for await snapshot in repository.snapshots() where snapshot.orderID == order {
                if snapshot.version < newest { log.record { $0.outOfOrderDrops += 1 } }
                newest = max(newest, snapshot.version)
            }
        }
    }

    /// Samples the order every simulated second until it ends: the time in each stage, the app going away and
    /// coming back, the Live Activity and what the screen draws; now and then a cancel while it is placed.
    private func watch(_ orderID: String, on app: ShopperApp, live: inout Task<Void, Never>?) async {
        let log = context.log, lifecycle = app.lifecycle
        // A third of customers put the app away once, for one to five minutes, and come back.
        let awayAt: Double? = random.unit() < 0.35 ? 60 + 400 * random.unit() : nil
        let awayFor = 60 + 240 * random.unit()
        let cancelAt: Double? = random.unit() < 0.03 ? 30 + 60 * random.unit() : nil
        let placedAt = context.dates.now()
        var sampledAt = placedAt, sampledStage: SimulationObservations.PollStage?
        var shown = ShownWindows()
        while !Task.isCancelled {
            guard await context.pause(1) else { return }
            let now = context.dates.now(), elapsed = now.timeIntervalSince(placedAt)
            if let awayAt {
                let away = elapsed >= awayAt && elapsed < awayAt + awayFor
                if away, lifecycle.phase == .foreground { lifecycle.set(.background); live?.cancel(); live = nil }
                if !away, lifecycle.phase != .foreground {
                    lifecycle.set(.foreground); live = Self.liveLoop(app.repository, app.order, context: context)
                }
            }
            // Order-minutes by the simulated time that passed in each stage (a busy run may wake this loop late).
            let passed = now.timeIntervalSince(sampledAt)
            sampledAt = now
            if let sampledStage { log.record { $0.orderMinutes[sampledStage, default: 0] += passed / 60 } }
            guard case .loaded(let snapshot) = app.store.state(of: app.order) else { continue }
            let foreground = lifecycle.phase == .foreground
            let current: SimulationObservations.PollStage =
                !foreground
                ? .background
                : (snapshot.status == .onTheWay || snapshot.status == .arriving ? .onTheWay : .picking)
            stage.value.withLock { $0 = current }
            sampledStage = snapshot.status.isTerminal ? nil : current
            if snapshot.status.isTerminal {
                recordEnd(of: orderID, snapshot, shown: shown)
                return
            }
            noteStopsBefore(snapshot.stopsBefore, of: orderID, shown: &shown)
            let staleActivity = now > snapshot.generatedAt.addingTimeInterval(Self.liveActivityStaleAfter)
            log.record { seen in
                seen.liveActivityRenders += 1
                if staleActivity { seen.liveActivityStale += 1 }
            }
            guard foreground else { continue }
            sampleScreen(app.viewModel.viewState, snapshot, now: now, shown: &shown)
            if let cancelAt, elapsed > cancelAt, snapshot.status == .placed {
                _ = try? await network.send(
                    await server.request("POST", APIPath.orderCancel(orderID), body: Data("{}".utf8)))
            }
        }
    }

    /// Records a delivered order's arrival against the windows shown, or a cancelled order.
    private func recordEnd(of orderID: String, _ snapshot: OrderTracking, shown: ShownWindows) {
        guard snapshot.status == .delivered else {
            context.log.record { $0.ordersCancelled += 1 }
            return
        }
        var arrival = SimulationObservations.OrderArrival(
            lastWindow: shown.last, firstOnTheWayWindow: shown.firstOnTheWay, deliveredAt: snapshot.generatedAt,
            onTheWayWindows: shown.onTheWay)
        context.log.record { seen in
            arrival.arrivedAt = seen.doorArrivals[orderID]
            seen.ordersDelivered += 1; seen.orderArrivals.append(arrival); seen.paidTripIDs.append(orderID)
        }
    }

    /// Notes the stops for other orders the tracking shows before this one's hand-over, when it changes.
    private func noteStopsBefore(_ count: Int?, of orderID: String, shown: inout ShownWindows) {
        guard let count, shown.stopsBefore.last != count else { return }
        shown.stopsBefore.append(count)
        let seen = shown.stopsBefore
        context.log.record { $0.stopsBeforeSeen[orderID] = seen }
    }

    /// What the screen draws now: the snapshot's age, the rider pin's, and the arrival window.
    private func sampleScreen(
        _ state: OrderTrackingViewState, _ snapshot: OrderTracking, now: Date, shown: inout ShownWindows
    ) {
        let age = now.timeIntervalSince(snapshot.generatedAt)
        var pinAge: Double?
        if case .live(let fix) = state.riderPin { pinAge = now.timeIntervalSince(fix.recordedAt) }
        if case .window(let window) = freshness.eta(snapshot.eta, generatedAt: snapshot.generatedAt, now: now) {
            shown.last = window
            if shown.firstOnTheWay == nil, snapshot.status == .onTheWay { shown.firstOnTheWay = window }
            if snapshot.status == .onTheWay || snapshot.status == .arriving {
                shown.onTheWay[window, default: 0] += 1
            }
        }
        context.log.record { seen in
            seen.snapshotAgesShown.append(age)
            if let pinAge { seen.livePinAges.append(pinAge) }
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
