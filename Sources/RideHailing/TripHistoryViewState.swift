public import Foundation
public import EnRouteModels

/// Everything the history screen shows.
public struct TripHistoryViewState: Equatable, Sendable {
    /// The trips shown, newest first.
    public var trips: [TripSnapshot] = []
    /// Where the next page starts; nil on the last page.
    public var nextCursor: String?
    /// False while the trips are the kept copy from `savedAt`, shown because the server could not be reached.
    public var isFresh = false
    /// When the trips shown were fetched, for a kept copy.
    public var savedAt: Date?
    /// A load is in flight.
    public var isLoading = false
    /// A message for the rider, or nil.
    public var errorMessage: String?

    /// Nothing loaded yet.
    public init() {}

    /// True when there is a further page to ask for.
    public var canLoadMore: Bool { nextCursor != nil && !isLoading }
}
