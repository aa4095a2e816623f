import Foundation

/// Which trips a list page reads; each one is served by an index of the store, newest first.
public enum TripQuery: Sendable, Hashable {
    /// Every trip, or (with a status name) only those in that state or delivery status.
    case all(status: String?)
    /// A merchant's orders that have not finished.
    case merchantActive(merchantId: String)
    /// Every trip a customer, provider or merchant took part in: their history.
    case party(Party, id: String)

    /// Whether `trip` belongs in this query's answer (the in-memory store's filter, and a check for others).
    public func matches(_ trip: TripRecord) -> Bool {
        switch self {
        case .all(let status): status == nil || trip.status.name == status
        case .merchantActive(let merchantId): trip.merchantId == merchantId && trip.status.isActive
        case .party(.customer, let id): trip.customerId == id
        case .party(.provider, let id): trip.providerId == id
        case .party(.merchant, let id): trip.merchantId == id
        case .party: false
        }
    }
}

/// A position in the newest-first order (created at, then id, both descending): a page holds the rows after it.
public struct TripCursor: Sendable, Hashable {
    /// The last row's creation time as the store keeps it (seconds since 1970).
    public let createdAt: Double
    /// The last row's id, which breaks ties between trips created at the same time.
    public let id: String

    /// The position of a row with this creation time and id.
    public init(createdAt: Double, id: String) {
        self.createdAt = createdAt; self.id = id
    }

    /// The position just after `trip`.
    public init(after trip: TripRecord) {
        self.init(createdAt: trip.createdAt.timeIntervalSince1970, id: trip.id)
    }

    /// Whether a row at (`createdAt`, `id`) comes after this position in newest-first order.
    public func precedes(createdAt: Double, id: String) -> Bool {
        createdAt < self.createdAt || (createdAt == self.createdAt && id < self.id)
    }

    /// The opaque wire form: base64url (no padding) of `createdAt|id`, `createdAt` written so it reads back exactly.
    public var token: String {
        Data("\(createdAt)|\(id)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Reads a token written by `token`; nil when it is not one.
    public init?(token: String) {
        guard !token.isEmpty, token.count <= 512,
            token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { return nil }
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8),
            let bar = text.firstIndex(of: "|"), let createdAt = Double(text[..<bar]), createdAt.isFinite
        else { return nil }
        let id = String(text[text.index(after: bar)...])
        guard !id.isEmpty else { return nil }
        self.init(createdAt: createdAt, id: id)
    }
}

/// One page of a list query: its rows, newest first, and where the next page starts (nil on the last page).
public struct TripPage: Sendable, Equatable {
    /// The rows of this page.
    public let trips: [TripRecord]
    /// The position after the last row when more rows follow it; nil when this is the last page.
    public let next: TripCursor?

    /// A page of `trips` followed by the rows after `next`.
    public init(trips: [TripRecord], next: TripCursor?) {
        self.trips = trips; self.next = next
    }
}

extension TripStore {
    /// The newest `limit` trips, optionally only those in one status (the first page of `.all(status:)`).
    public func trips(status: String?, limit: Int) throws -> [TripRecord] {
        try trips(.all(status: status), after: nil, limit: limit).trips
    }
}
