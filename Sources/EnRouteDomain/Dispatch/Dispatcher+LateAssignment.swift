import Foundation

/// Late assignment: a delivery's courier is looked for so as to reach the merchant when the order is ready, not long
/// before (`DeliveryAssignment.late`).
///
/// The wait is the order's own search, under its lease, begun again after a restart like any other. It measures the
/// nearest idle couriers' road time to the merchant, and measures again each `lateRecheck` (supply moves) and whenever
/// the order changes (the merchant accepts with a preparation time, or marks it ready early).
extension Dispatcher {
    /// How often a late assignment's wait measures supply again.
    static let lateRecheck: TimeInterval = 60

    /// Waits until the order's courier should be looked for; false when it no longer needs one or the search was
    /// stopped. Passes at once for rides, orders booked ahead, and when `deliveryAssignment` is `now`.
    func awaitCourierStart(
        _ tripId: String, _ inbox: inout AsyncStream<Signal>.Iterator, _ continuation: AsyncStream<Signal>.Continuation
    ) async -> Bool {
        guard policy.deliveryAssignment == .late else { return true }
        while !Task.isCancelled {
            guard let trip = waiting(tripId) else { return false }
            guard trip.kind == .delivery, trip.scheduledFor == nil else { return true }
            // Nobody near: waiting makes nothing better, and the search waits for supply by itself.
            guard let pickup = await nearestPickupSeconds(trip) else { return true }
            let start = readyTime(of: trip).addingTimeInterval(-pickup - Self.seconds(policy.readyMargin))
            let left = start.timeIntervalSince(now())
            guard left > 0 else { return true }
            let timer = startTimer(Self.duration(min(left, Self.lateRecheck)), continuation)
            defer { timer.task.cancel() }
            waitLoop: while let signal = await inbox.next() {
                switch signal {
                case .timer(let token) where token == timer.token: break waitLoop
                case .tripChanged:
                    guard let now = waiting(tripId) else { return false }
                    if now.readyAt != trip.readyAt { break waitLoop }
                default: continue
                }
            }
        }
        return false
    }
}
