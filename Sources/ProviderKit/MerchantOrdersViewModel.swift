import EnRouteModels
public import Observation

/// The merchant's order screen: list orders, accept with a preparation time, mark ready.
///
/// Each tap gets one idempotency key, reused for the automatic retries and for a manual retry after a failure,
/// until the server gives a definite answer; so a lost response never applies a tap twice.
@MainActor @Observable
public final class MerchantOrdersViewModel {
    /// What the screen shows.
    public private(set) var state = MerchantOrdersViewState()

    @ObservationIgnored private let api: any MerchantOrdersAPI
    @ObservationIgnored private let clock: any Clock<Duration>
    @ObservationIgnored private let makeKey: @Sendable () -> String
    @ObservationIgnored private var keys: [String: String] = [:]

    static let attempts = 3
    static let loadFailedMessage = "Couldn't load orders. Pull to refresh."
    static let actionFailedMessage = "Couldn't reach EnRoute. Tap again to retry."

    /// A screen over `api`; `clock` spaces retries, `makeKey` makes one idempotency key per tap.
    public init(api: any MerchantOrdersAPI, clock: any Clock<Duration>, makeKey: @escaping @Sendable () -> String) {
        self.api = api
        self.clock = clock
        self.makeKey = makeKey
    }

    /// Loads the merchant's unfinished orders.
    public func load() async {
        state.isLoading = true
        defer { state.isLoading = false }
        do {
            state.orders = try await api.orders().sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
            state.message = nil
        } catch {
            state.message = Self.loadFailedMessage
        }
    }

    /// Accepts `orderId`, ready in `preparationMinutes` (1 to 240).
    public func accept(_ orderId: String, preparationMinutes: Int) async {
        await perform(.accept, on: orderId) { api, key in
            try await api.accept(orderId: orderId, preparationMinutes: preparationMinutes, idempotencyKey: key)
        }
    }

    /// Marks `orderId` ready for the courier.
    public func markReady(_ orderId: String) async {
        await perform(.markReady, on: orderId) { api, key in
            try await api.markReady(orderId: orderId, idempotencyKey: key)
        }
    }

    private func perform(
        _ action: MerchantAction, on orderId: String,
        _ call: @Sendable (any MerchantOrdersAPI, String) async throws -> TripSnapshot
    ) async {
        guard !state.busy.contains(orderId) else { return }
        state.busy.insert(orderId)
        state.message = nil
        defer { state.busy.remove(orderId) }
        let slot = "\(action.rawValue) \(orderId)"
        let key = keys[slot] ?? makeKey()
        keys[slot] = key
        for attempt in 1...Self.attempts {
            do {
                replace(try await call(api, key))
                keys[slot] = nil
                return
            } catch let conflict as TripConflict {
                keys[slot] = nil
                replace(conflict.trip)
                state.message = conflict.reason
                return
            } catch  where SyncBackoff.isTransient(error) {
                guard attempt < Self.attempts else { break }
                do { try await clock.sleep(for: .seconds(attempt)) } catch { break }
            } catch {
                keys[slot] = nil
                state.message = "\(error)"
                return
            }
        }
        state.message = Self.actionFailedMessage
    }

    private func replace(_ order: TripSnapshot) {
        if let i = state.orders.firstIndex(where: { $0.id == order.id }) {
            if order.version >= state.orders[i].version { state.orders[i] = order }
        } else {
            state.orders.append(order)
        }
        if ProviderStep.isFinished(order.status) { state.orders.removeAll { $0.id == order.id } }
    }
}
