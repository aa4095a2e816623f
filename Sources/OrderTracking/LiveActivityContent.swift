public import Foundation
public import EnRouteModels

/// What the lock-screen card shows: small, under ActivityKit's 4 KB, no map.
///
/// The rider's name is not on the card: a Live Activity push travels in clear, and the name only ever leaves the
/// server sealed to the device's key, so a card the server updates could not keep it.
public struct LiveActivityContent: Equatable, Sendable {
    public let status: OrderStatus
    public let eta: ClosedRange<Date>?
    /// When the card greys out unless a newer update arrives (about 3 minutes ahead).
    public let staleDate: Date
    /// Stops the courier makes for other orders first; nil while no courier carries the order.
    public let stopsBefore: Int?

    /// Content with every field given.
    public init(status: OrderStatus, eta: ClosedRange<Date>?, staleDate: Date, stopsBefore: Int? = nil) {
        self.status = status; self.eta = eta; self.staleDate = staleDate; self.stopsBefore = stopsBefore
    }

    /// The content as ActivityKit stores it, the same shape the server's push carries: the wire status, the
    /// latest arrival time in whole seconds (rounded up, as the server rounds it) and the stops before this order.
    public var contentState: OrderActivityContentState {
        OrderActivityContentState(
            status: status.wire,
            etaLatest: eta.map { Int($0.upperBound.timeIntervalSince1970.rounded(.up)) },
            stopsBefore: status.isTerminal ? nil : stopsBefore)
    }
}

extension OrderStatus {
    /// The status's wire name.
    var wire: OrderStatusWire {
        switch self {
        case .placed: .placed
        case .picking: .picking
        case .onTheWay: .onTheWay
        case .arriving: .arriving
        case .delivered: .delivered
        case .cancelled: .cancelled
        case .problem: .problem
        }
    }
}

extension OrderActivityContentState {
    /// The card's status in words, as the tracking screen names its steps ("On the way", "Cancelled").
    public var title: String {
        switch status {
        case .placed: OrderStep.placed.title
        case .picking: OrderStep.picking.title
        case .onTheWay: OrderStep.onTheWay.title
        case .arriving: OrderStep.arriving.title
        case .delivered: OrderStep.delivered.title
        case .cancelled: "Cancelled"
        case .problem: "There's a problem with your order"
        }
    }

    /// "1 stop before yours" while the courier hands over other orders first, as the tracking screen words it.
    public var stopsLine: String? { ETAWording.stopsBefore(stopsBefore) }
}
