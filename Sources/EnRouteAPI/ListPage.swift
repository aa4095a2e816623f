public import EnRouteDomain
import HTTPEngine
import EnRouteModels

/// The `?cursor=&limit=` of a list endpoint, checked: a malformed or out-of-range value is a 422 naming it.
struct ListPage: Sendable, Equatable {
    /// The most rows one page may hold.
    static let maxLimit = 200

    /// Where the page starts (nil: the newest row).
    let cursor: TripCursor?
    /// How many rows the page holds at most.
    let limit: Int

    /// Reads `cursor` and `limit` from `query`; absent or empty means the first page of `defaultLimit` rows.
    init(_ query: [String: String], defaultLimit: Int) throws(HTTPError) {
        if let text = query["limit"], !text.isEmpty {
            guard let limit = Int(text), (1...Self.maxLimit).contains(limit) else {
                throw HTTPError.invalid("/limit", "must be an integer from 1 to \(Self.maxLimit)")
            }
            self.limit = limit
        } else {
            limit = defaultLimit
        }
        if let text = query["cursor"], !text.isEmpty {
            guard let cursor = TripCursor(token: text) else {
                throw HTTPError.invalid("/cursor", "is not a cursor this server returned as nextCursor")
            }
            self.cursor = cursor
        } else {
            cursor = nil
        }
    }

    /// The wire list of `page`, with `nextCursor` when more rows follow.
    static func list(_ page: TripPage, _ wire: WireMapping) -> TripSnapshotList {
        TripSnapshotList(trips: page.trips.map(wire.snapshot), nextCursor: page.next?.token)
    }
}
