public import Foundation
public import EnRouteModels

/// One snapshot of an order as the server built it; the model every layer above the repository shares.
public struct OrderTracking: Equatable, Sendable {
    public let orderID: OrderID
    /// bumped by the server on every change
    public let version: Int
    public let status: OrderStatus
    /// absolute times, so an old snapshot is still right. nil = unknown
    public let eta: ClosedRange<Date>?
    /// coordinate + recordedAt. nil before she leaves the hub
    public let rider: RiderFix?
    public let destination: Coordinate
    /// when the server built this snapshot
    public let generatedAt: Date
    /// Stops the courier makes for other orders before handing this one over; nil while no courier carries it.
    public let stopsBefore: Int?

    /// A snapshot with every field given.
    public init(
        orderID: OrderID, version: Int, status: OrderStatus, eta: ClosedRange<Date>?, rider: RiderFix?,
        destination: Coordinate, generatedAt: Date, stopsBefore: Int? = nil
    ) {
        self.orderID = orderID; self.version = version; self.status = status; self.eta = eta
        self.rider = rider; self.destination = destination; self.generatedAt = generatedAt
        self.stopsBefore = stopsBefore
    }

    /// The same snapshot with another rider fix.
    public func replacingRider(_ rider: RiderFix?) -> OrderTracking {
        OrderTracking(
            orderID: orderID, version: version, status: status, eta: eta, rider: rider,
            destination: destination, generatedAt: generatedAt, stopsBefore: stopsBefore)
    }
}
