public import Foundation

/// A trip as providers, merchants and ops see it: the whole state without customer-only detail.
public struct TripSnapshot: Codable, Sendable, Equatable {
    public let id: String
    /// "ride" or "delivery".
    public let kind: String
    public let version: Int
    /// The state in the trip's own vocabulary (`driverAssigned`, `picking`, ...).
    public let status: String
    public let problem: String?
    public let pickup: Coordinate
    public let dropoff: Coordinate
    public let providerId: String?
    public let merchantId: String?
    /// Deliveries: pending, preparing or ready.
    public let merchantStep: String?
    public let readyAt: Date?
    public let items: [OrderItem]?
    public let productID: String?
    public let etaEarliest: Date?
    public let etaLatest: Date?
    public let cancelledBy: String?
    public let cancelReason: String?
    public let createdAt: Date
    public let updatedAt: Date
    /// Metres of road the completed trip's kept path matched onto (absent before completion or without roads).
    public var matchedDistanceMeters: Double? = nil
    /// Seconds of driving along the matched path at the router's speeds.
    public var matchedDurationSeconds: Double? = nil
    /// The quoted fare, then the final one once the trip ended.
    public var fare: Money? = nil
    /// Where the trip's payment stands.
    public var payment: PaymentStatus? = nil
    /// The customer's tip, once given.
    public var tip: Money? = nil
    /// A trip booked ahead: when the provider is due at the pickup.
    public var scheduledFor: Date? = nil
    /// A trip booked ahead: when its search for a provider began (absent until then).
    public var matchingStartedAt: Date? = nil
    /// A courier carrying several orders: the stops left, in the order it drives them (the courier's view only).
    public var stops: [PlannedStop]? = nil

    public init(
        id: String, kind: String, version: Int, status: String, problem: String?, pickup: Coordinate,
        dropoff: Coordinate,
        providerId: String?, merchantId: String?, merchantStep: String?, readyAt: Date?, items: [OrderItem]?,
        productID: String?,
        etaEarliest: Date?, etaLatest: Date?, cancelledBy: String?, cancelReason: String?, createdAt: Date,
        updatedAt: Date
    ) {
        self.id = id; self.kind = kind; self.version = version; self.status = status; self.problem = problem
        self.pickup = pickup; self.dropoff = dropoff; self.providerId = providerId; self.merchantId = merchantId
        self.merchantStep = merchantStep; self.readyAt = readyAt; self.items = items; self.productID = productID
        self.etaEarliest = etaEarliest; self.etaLatest = etaLatest; self.cancelledBy = cancelledBy;
        self.cancelReason = cancelReason
        self.createdAt = createdAt; self.updatedAt = updatedAt
    }
}

/// `GET /v1/ops/trips`, `GET /v1/provider/trips/active`, `GET /v1/merchant/orders`.
public struct TripSnapshotList: Codable, Sendable, Equatable {
    public let trips: [TripSnapshot]
    /// Passed back as `?cursor=` for the next page of a paged list; absent on the last page (and on unpaged lists).
    public let nextCursor: String?
    public init(trips: [TripSnapshot], nextCursor: String? = nil) { self.trips = trips; self.nextCursor = nextCursor }
}

/// A 409 answer: a problem document whose `trip` member carries the real current trip.
public struct ConflictProblem<Current: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    public let type: String
    public let title: String
    public let status: Int
    public let detail: String
    public let trip: Current
    public init(detail: String, trip: Current, type: String = "https://enroute.invalid/problems/move-refused") {
        self.type = type; self.title = "Conflict"; self.status = 409; self.detail = detail; self.trip = trip
    }
}

/// `POST /v1/provider/locations` answer.
public struct LocationBatchResult: Codable, Sendable, Equatable {
    public let batchId: String
    /// Fixes kept from this batch.
    public let accepted: Int
    /// Fixes dropped (older than the last kept, implausible, or duplicates).
    public let dropped: Int
    public init(batchId: String, accepted: Int, dropped: Int) {
        self.batchId = batchId; self.accepted = accepted; self.dropped = dropped
    }
}

/// `POST /v1/ops/trips/{id}/problem` body: a message shows a problem, null clears it.
public struct ProblemReport: Codable, Sendable, Equatable {
    public let message: String?
    public init(message: String?) { self.message = message }
}

/// `POST /v1/ops/trips/{id}/assign` body: ops hands a waiting trip to a provider, outside dispatch.
public struct AssignRequest: Codable, Sendable, Equatable {
    public let providerId: String
    /// Why ops stepped in; kept in the server's log with the assignment.
    public let reason: String?
    public init(providerId: String, reason: String? = nil) { self.providerId = providerId; self.reason = reason }
}
