public import ClientKit
public import Observation

/// The Home screen's order banner; reads the same store as the tracking screen, so they never disagree.
@MainActor @Observable
public final class HomeBannerViewModel {
    /// What the banner shows for one active order.
    public struct Banner: Equatable, Sendable {
        public let order: OrderID
        /// "On the way"
        public let title: String
        /// The ETA wording, or the problem message.
        public let detail: String
    }

    @ObservationIgnored private let store: OrderTrackingStore
    @ObservationIgnored private let freshness: TrackingFreshnessPolicy
    @ObservationIgnored private let clock: any DateProvider

    /// A banner over `store`, worded by `freshness` at the time `clock` gives.
    public init(store: OrderTrackingStore, freshness: TrackingFreshnessPolicy, clock: any DateProvider) {
        self.store = store
        self.freshness = freshness
        self.clock = clock
    }

    /// The most recently updated active order's banner; nil when no order is active.
    public var banner: Banner? {
        guard let snapshot = store.activeOrders.first else { return nil }
        let wording = freshness.text(
            for: freshness.eta(snapshot.eta, generatedAt: snapshot.generatedAt, now: clock.now()))
        if case .problem(let message) = snapshot.status {
            return Banner(
                order: snapshot.orderID, title: store.lastStep(of: snapshot.orderID)?.title ?? "Your order",
                detail: message)
        }
        return Banner(order: snapshot.orderID, title: snapshot.status.step?.title ?? "Your order", detail: wording)
    }
}
