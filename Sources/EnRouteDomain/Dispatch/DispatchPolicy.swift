/// How a search finds its candidate.
public enum DispatchMatching: String, Sendable, Equatable, CaseIterable {
    /// Each request is offered to its own best candidate as soon as it looks.
    case greedy
    /// Requests looking within one window of a city are matched together: the assignment of least total road time to
    /// the pickups over each request's shortlist.
    case batched
}

/// When a delivery's courier is looked for.
public enum DeliveryAssignment: String, Sendable, Equatable, CaseIterable {
    /// As soon as the order is placed.
    case now
    /// So that the nearest courier reaches the merchant when the order is ready, not long before.
    case late
}

/// The dispatcher's limits.
public struct DispatchPolicy: Sendable, Equatable {
    /// Greedy (each request at once) or batched (gathered over `batchWindow`, matched together).
    public var matching: DispatchMatching = .greedy
    /// In batched matching, how long a city's requests are gathered before they are matched; none waits longer.
    public var batchWindow: Duration = .seconds(2)
    /// How long a provider has to answer an offer.
    public var offerTimeout: Duration = .seconds(15)
    /// After an offer's time ran out while it was being accepted, how long until its search looks at it again.
    public var acceptGrace: Duration = .seconds(2)
    /// On a node of several, how long a node's lease of a search lasts without renewal; a node that dies hands its
    /// searches over within this and `takeoverInterval`.
    public var searchLease: Duration = .seconds(10)
    /// How often a node of several renews its leases and looks for searches to take over.
    public var takeoverInterval: Duration = .seconds(2)
    /// Offers made in one search before giving up.
    public var maxCandidates: Int = 5
    /// How long one search may last before giving up.
    public var searchLimit: Duration = .seconds(120)
    /// After a delivery's search gives up, the wait before the next search (deliveries are never abandoned by
    /// dispatch).
    public var deliveryRetry: Duration = .seconds(60)
    /// Only providers this close to the pickup are candidates, in metres.
    public var searchRadius: Double = 10_000
    /// How many of the nearest candidates the ranking sees.
    public var shortlist: Int = 10
    /// While a search waits for supply, how often it looks again by itself: on a node of several (the other nodes'
    /// word that supply changed is only a wake-up, and may be lost), and after the provider locations could not be
    /// read.
    public var supplyRecheck: Duration = .seconds(5)
    /// A trip booked ahead: how long before it is due the supply near its pickup is measured.
    public var bookedLookahead: Duration = .seconds(45 * 60)
    /// A trip booked ahead: its search begins this long before the nearest provider would have to leave, for offers to
    /// be answered; the provider is then at the pickup about this long before it is due.
    public var bookedMargin: Duration = .seconds(180)
    /// A trip booked ahead with nobody near when supply was measured: the road time its search allows.
    public var bookedFallbackPickup: Duration = .seconds(600)

    /// Orders a courier carries at once: a courier carrying fewer may be offered one more on their way.
    public var stackCapacity: Int = 2
    /// The most a second order may add to the first customer's arrival, and the most its own customer may wait beyond
    /// a courier of its own.
    public var stackLimit: Duration = .seconds(300)
    /// When a delivery's courier is looked for: at once, or late enough to reach the merchant as the order is ready.
    public var deliveryAssignment: DeliveryAssignment = .now
    /// Late assignment: how long before the order is ready the courier is planned to reach the merchant.
    public var readyMargin: Duration = .seconds(120)
    /// An order the merchant has not yet accepted is planned as ready this long after it was placed.
    public var assumedPreparation: Duration = .seconds(600)

    public init() {}
}
