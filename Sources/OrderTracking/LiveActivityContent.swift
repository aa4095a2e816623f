public import Foundation

/// What the lock-screen card shows: small, under ActivityKit's 4 KB, no map.
public struct LiveActivityContent: Equatable, Sendable {
    public let status: OrderStatus
    public let eta: ClosedRange<Date>?
    public let riderFirstName: String?
    /// When the card greys out unless a newer update arrives (about 3 minutes ahead).
    public let staleDate: Date

    /// Content with every field given.
    public init(status: OrderStatus, eta: ClosedRange<Date>?, riderFirstName: String?, staleDate: Date) {
        self.status = status; self.eta = eta; self.riderFirstName = riderFirstName; self.staleDate = staleDate
    }
}
