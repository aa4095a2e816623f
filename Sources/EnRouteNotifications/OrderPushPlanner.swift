public import Foundation
public import EnRouteDomain
import EnRouteModels
import Synchronization

/// Turns delivery changes into outbox messages inside the change's own transaction (order alerts and Live Activity
/// updates).
///
/// Order updates: picking, on the way, arriving, delivered, a new problem. Live Activity: an update at
/// priority 10 on every stage change and whenever the stops before the order change (the card's words change),
/// at priority 5 when the ETA drifts (rate-limited), the end on delivered or cancelled.
public final class OrderPushPlanner: TripChangeObserver {
    private struct DriftState { var etaLatest: Int?; var lastLowPriority: Date? }

    private let directory: any PartyDirectory
    private let drift = Mutex<[String: DriftState]>([:])
    /// An ETA move smaller than this is not worth a Live Activity push.
    public let driftThreshold: TimeInterval
    /// At most one low-priority drift push per order this often.
    public let driftInterval: TimeInterval
    /// How far ahead each update's stale-date is set.
    public let staleAfter: TimeInterval
    /// How long an order update is worth delivering.
    public let alertLifetime: TimeInterval

    public init(
        directory: any PartyDirectory, driftThreshold: TimeInterval = 60, driftInterval: TimeInterval = 120,
        staleAfter: TimeInterval = 180, alertLifetime: TimeInterval = 3600
    ) {
        self.directory = directory; self.driftThreshold = driftThreshold; self.driftInterval = driftInterval
        self.staleAfter = staleAfter; self.alertLifetime = alertLifetime
    }

    public func tripChanged(from old: TripRecord?, to new: TripRecord, in transaction: any TripTransaction) async throws
    {
        guard new.kind == .delivery, case .delivery(let status) = new.status else { return }
        let at = new.updatedAt
        if let stage = Self.alertStage(from: old, to: new) {
            try await transaction.enqueue(
                OutboxMessage(
                    id: "apns.alert.\(new.id).\(new.version)", topic: PushJob.topic,
                    payload: try alertJob(stage, new, at).encoded(), createdAt: at))
        }
        if let job = liveActivityJob(from: old, to: new, status: status, at: at) {
            // Drift between versions has no version of its own: its time keeps the outbox id unique. (A change of the
            // stops before the order comes with a version: the route is rewritten on each order it names.)
            let id =
                job.priority == 5
                ? "apns.la.\(new.id).\(new.version).\(Int(at.timeIntervalSince1970))"
                : "apns.la.\(new.id).\(new.version)"
            try await transaction.enqueue(
                OutboxMessage(
                    id: id, topic: PushJob.topic,
                    payload: try job.encoded(), createdAt: at))
        }
        if status.isTerminal { _ = drift.withLock { $0.removeValue(forKey: new.id) } }
    }

    /// Whether the card's stage changed: its status, or a problem raised or cleared.
    static func stageChanged(from old: TripRecord?, to new: TripRecord) -> Bool {
        old?.status != new.status || old?.problem != new.problem
    }

    /// The stage to announce for this change, if any. Moving back (a courier gave up) announces nothing.
    static func alertStage(from old: TripRecord?, to new: TripRecord) -> OrderStage? {
        guard case .delivery(let status) = new.status else { return nil }
        let before: DeliveryStatus? = if case .delivery(let s) = old?.status { s } else { nil }
        if status != before, let before, rank(status) > rank(before) {
            switch status {
            case .picking: return .picking
            case .onTheWay: return .onTheWay
            case .arriving: return .arriving
            case .delivered: return .delivered
            case .placed, .cancelled: return nil
            }
        }
        if let problem = new.problem, problem != old?.problem, new.status.isActive { return .problem }
        return nil
    }

    private static func rank(_ s: DeliveryStatus) -> Int {
        switch s {
        case .placed: 0
        case .picking: 1
        case .onTheWay: 2
        case .arriving: 3
        case .delivered, .cancelled: 4
        }
    }

    private func alertJob(_ stage: OrderStage, _ trip: TripRecord, _ at: Date) -> PushJob {
        var job = PushJob(
            kind: .orderUpdate, orderId: trip.id, accountId: trip.customerId, orderVersion: trip.version,
            expiresAt: at.addingTimeInterval(alertLifetime))
        job.stage = stage
        job.notificationId = "\(trip.id).\(trip.version)"
        if stage.namesRider, let provider = trip.providerId {
            let profile = directory.provider(id: provider)
            job.riderFirstName = profile.firstName
            job.imageUrl = profile.photoURL.absoluteString
        }
        return job
    }

    private func liveActivityJob(
        from old: TripRecord?, to new: TripRecord, status: DeliveryStatus, at: Date
    ) -> PushJob? {
        guard let token = new.liveActivityToken else { return nil }
        let eta = new.etaLatest.map { Int($0.timeIntervalSince1970) }
        // "1 stop before yours" turning to nothing is news on the card even when the ETA holds (nil and 0 both
        // show nothing).
        let wordsChanged =
            Self.stageChanged(from: old, to: new) || (old?.stopsBefore ?? 0) != (new.stopsBefore ?? 0)
        var priority = 10
        if !wordsChanged {
            // ETA drift: low priority, and rarely, to stay inside the budget.
            let allowed: Bool = drift.withLock { d in
                let state = d[new.id] ?? DriftState()
                guard let eta, let last = state.etaLatest ?? old?.etaLatest.map({ Int($0.timeIntervalSince1970) }),
                    abs(Double(eta - last)) >= driftThreshold
                else { return false }
                if let sent = state.lastLowPriority, at.timeIntervalSince(sent) < driftInterval { return false }
                d[new.id] = DriftState(etaLatest: eta, lastLowPriority: at)
                return true
            }
            guard allowed else { return nil }
            priority = 5
        } else {
            drift.withLock { $0[new.id, default: DriftState()].etaLatest = eta }
        }
        let ends = status.isTerminal
        var job = PushJob(
            kind: .liveActivity, orderId: new.id, accountId: new.customerId, orderVersion: new.version,
            expiresAt: at.addingTimeInterval(ends ? 4 * 3600 : staleAfter))
        job.liveActivityToken = token
        job.event = ends ? "end" : "update"
        job.priority = priority
        job.timestamp = Int(at.timeIntervalSince1970)
        job.staleDate = ends ? nil : Int(at.addingTimeInterval(staleAfter).timeIntervalSince1970)
        job.status = new.problem != nil && new.status.isActive ? OrderStatusWire.problem.rawValue : status.rawValue
        job.etaLatest = ends ? nil : eta
        job.stopsBefore = ends ? nil : new.stopsBefore
        return job
    }
}
