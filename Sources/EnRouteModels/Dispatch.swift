public import Foundation

/// `POST /v1/provider/availability` body: going online or offline, with where the provider is.
public struct AvailabilityRequest: Codable, Sendable, Equatable {
    public let online: Bool
    /// The provider's position when going online, if known.
    public let position: Coordinate?
    public init(online: Bool, position: Coordinate? = nil) { self.online = online; self.position = position }
}

/// `POST /v1/provider/availability` answer.
public struct AvailabilityState: Codable, Sendable, Equatable {
    public let online: Bool
    public init(online: Bool) { self.online = online }
}

/// A time-limited, exclusive offer of a trip to one provider (event `offer` on `GET /v1/provider/events`).
public struct Offer: Codable, Sendable, Equatable, Identifiable {
    public let offerId: String
    public let tripId: String
    public let pickup: Coordinate
    public let dropoff: Coordinate
    /// After this the offer is gone; an accept answers 409.
    public let expiresAt: Date
    /// An order offered to a courier already carrying one: the route over both if accepted, in the order to drive it.
    public var stops: [PlannedStop]? = nil
    /// With `stops`: the most seconds the route adds to the hand-over of an order the courier carries, as planned.
    public var addedSeconds: Int? = nil
    public var id: String { offerId }
    public init(offerId: String, tripId: String, pickup: Coordinate, dropoff: Coordinate, expiresAt: Date) {
        self.offerId = offerId; self.tripId = tripId; self.pickup = pickup; self.dropoff = dropoff;
        self.expiresAt = expiresAt
    }
}

/// Event `offerWithdrawn` on `GET /v1/provider/events`: the offer expired or the trip went elsewhere.
public struct OfferWithdrawn: Codable, Sendable, Equatable {
    public let offerId: String
    public let tripId: String
    public init(offerId: String, tripId: String) { self.offerId = offerId; self.tripId = tripId }
}
