public import Observation

/// Holds the newest snapshot per active order, for the tracking screen and the Home banner.
///
/// Snapshots are guarded by version through `OrderStatusPolicy`; rider fixes are guarded separately by
/// `recordedAt`, so a status bump never brings an older fix back.
@MainActor @Observable
public final class OrderTrackingStore {
    @ObservationIgnored private let tracking: any OrderTrackingRepository
    @ObservationIgnored private let status: OrderStatusPolicy
    private var snapshots: [OrderID: OrderTracking] = [:]
    private var lastSteps: [OrderID: OrderStep] = [:]
    private var isFollowing = false

    /// A store fed by `tracking`, judged by `status`.
    public init(tracking: any OrderTrackingRepository, status: OrderStatusPolicy = OrderStatusPolicy()) {
        self.tracking = tracking
        self.status = status
    }

    /// loading, loaded(OrderTracking), or unavailable (never fetched)
    public func state(of order: OrderID) -> TrackingState {
        if let snapshot = snapshots[order] { return .loaded(snapshot) }
        return isFollowing ? .loading : .unavailable
    }

    /// The last stage the order reached, kept while it shows a problem or after a cancel.
    public func lastStep(of order: OrderID) -> OrderStep? { lastSteps[order] }

    /// Orders not yet delivered or cancelled, most recently updated first.
    public var activeOrders: [OrderTracking] {
        snapshots.values.filter { !$0.status.isTerminal }.sorted { $0.generatedAt > $1.generatedAt }
    }

    /// Applies card 9's stream for the app's lifetime; returns when the calling task is cancelled.
    public func start() async {
        isFollowing = true
        defer { isFollowing = false }
        for await snapshot in tracking.snapshots() {
            apply(snapshot)
        }
    }

    /// Keeps `incoming` if the policy says it is newer; returns whether it did.
    ///
    /// At the same version (the same status) a later snapshot still brings a fresher ETA and
    /// `generatedAt`, and a later fix moves the pin: positions and estimates change between versions.
    @discardableResult
    func apply(_ incoming: OrderTracking) -> Bool {
        let current = snapshots[incoming.orderID]
        var accepted: OrderTracking
        if status.shouldReplace(current, with: incoming) {
            accepted = incoming
        } else if let current, !current.status.isTerminal, incoming.version == current.version {
            let fresher = incoming.generatedAt > current.generatedAt
            let newerFix = (incoming.rider?.recordedAt ?? .distantPast) > (current.rider?.recordedAt ?? .distantPast)
            guard fresher || newerFix else { return false }
            accepted = fresher ? incoming : current.replacingRider(incoming.rider)
            if accepted.rider == nil { accepted = accepted.replacingRider(current.rider) }
        } else {
            return false
        }
        if let kept = current?.rider, let fix = accepted.rider, kept.recordedAt > fix.recordedAt {
            accepted = accepted.replacingRider(kept)
        }
        snapshots[incoming.orderID] = accepted
        if let step = accepted.status.step { lastSteps[incoming.orderID] = step }
        return true
    }
}
