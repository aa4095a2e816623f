public import Foundation
public import EnRouteDomain
public import EnRouteModels
import PostgresClient

/// Offers on PostgreSQL (`offers`, migrated by `offer_migrations`), shared by every node on the database. Partial
/// unique
/// indexes keep one open offer per trip and per provider and one accepted offer per trip; an accept claims the offer
/// with
/// one conditional update, so of any number of accepts on any number of nodes one wins. With `databaseClock` the
/// database's clock decides whether an offer has run out, so nodes whose clocks disagree still agree on expiry.
public final class PostgresOfferStore: OfferStore, Sendable {
    /// Schema migrations of the offer table, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE offers (offer_id TEXT PRIMARY KEY, trip_id TEXT NOT NULL, provider_id TEXT NOT NULL, state \
        TEXT NOT NULL,
                             expires_at DOUBLE PRECISION NOT NULL, ended_at DOUBLE PRECISION, offer TEXT NOT NULL);
        CREATE UNIQUE INDEX offers_open_trip ON offers(trip_id) WHERE state IN ('live', 'accepting');
        CREATE UNIQUE INDEX offers_open_provider ON offers(provider_id) WHERE state IN ('live', 'accepting');
        CREATE UNIQUE INDEX offers_accepted_trip ON offers(trip_id) WHERE state = 'accepted';
        CREATE INDEX offers_ended ON offers(ended_at) WHERE ended_at IS NOT NULL;
        """,
        "CREATE TABLE dispatch_searches (trip_id TEXT PRIMARY KEY, node TEXT NOT NULL, expires_at DOUBLE "
            + "PRECISION NOT NULL);",
    ]

    private let store: PostgresTripStore
    private let now: @Sendable () -> Date
    private let databaseClock: Bool
    private static let columns = "offer, provider_id, state"

    /// Opens (creating if needed) the offer table in `tripStore`'s database; `databaseClock` lets the database's clock
    /// decide expiry instead of the `now` each call passes.
    public init(tripStore: PostgresTripStore, databaseClock: Bool = false, now: @escaping @Sendable () -> Date) throws {
        store = tripStore
        self.now = now
        self.databaseClock = databaseClock
        try store.migrateCompanion(Self.migrations, table: "offer_migrations", appliedAt: now())
    }

    /// The instant an expiry is judged at, as SQL: the database's clock or the parameter `$n`.
    private func instant(_ n: Int) -> String {
        databaseClock ? "extract(epoch FROM clock_timestamp())" : "$\(n)::double precision"
    }

    public func open(_ offer: Offer, to provider: String, now: Date) async throws -> Bool {
        let json = String(decoding: try WireCoding.encoder().encode(offer), as: UTF8.self)
        let at = seconds(now), expiry = instant(1)
        return try await store.write { db in
            // Decided with the trip's row locked against change: a trip assigned, taken or cancelled meanwhile (on any
            // node) is offered to nobody, and one changing now waits for this offer and then withdraws it.
            let waiting = try db.query(
                "SELECT 1 FROM trips WHERE id = $1 AND \(TripStatus.waitingForProviderSQL) FOR SHARE",
                [.text(offer.tripId)])
            guard !waiting.isEmpty else { return false }
            // An offer of either past its time whose search died with its node ends here.
            try db.run(
                """
                UPDATE offers SET state = 'expired', ended_at = $1
                WHERE state = 'live' AND expires_at < \(expiry) AND (trip_id = $2 OR provider_id = $3)
                """, [at, .text(offer.tripId), .text(provider)])
            try db.run(
                "UPDATE offers SET state = 'returned' WHERE trip_id = $1 AND state = 'accepted'", [.text(offer.tripId)])
            return try db.run(
                """
                INSERT INTO offers (offer_id, trip_id, provider_id, state, expires_at, offer) VALUES ($1, $2, $3, \
                'live', $4, $5)
                ON CONFLICT DO NOTHING
                """,
                [.text(offer.offerId), .text(offer.tripId), .text(provider), seconds(offer.expiresAt), .text(json)])
                == 1
        }
    }

    public func claim(_ offerId: String, by provider: String, now: Date) async throws -> OfferClaim {
        let at = seconds(now), expiry = instant(3), databaseClock = self.databaseClock
        return try await store.write { db in
            let claimed =
                try db.run(
                    """
                    UPDATE offers SET state = 'accepting' WHERE offer_id = $1 AND provider_id = $2 AND state = 'live' \
                    AND expires_at >= \(expiry)
                    """, [.text(offerId), .text(provider)] + (databaseClock ? [] : [at])) == 1
            guard let record = try Self.record(offerId, in: db), record.providerId == provider else { return .notFound }
            if claimed { return .claimed(record) }
            if record.accepting { return .busy(tripId: record.offer.tripId) }
            if record.ending == nil {
                // Live but past its time: it ends now, unless another accept claimed it in between.
                guard
                    try db.run(
                        "UPDATE offers SET state = 'expired', ended_at = $2 WHERE offer_id = $1 AND state = 'live'",
                        [.text(offerId), at]) == 1
                else { return .busy(tripId: record.offer.tripId) }
                var expired = record
                expired.ending = .expired
                return .ended(expired, justExpired: true)
            }
            return .ended(record, justExpired: false)
        }
    }

    public func unclaim(_ offerId: String) async throws {
        try await store.write { db in
            try db.run("UPDATE offers SET state = 'live' WHERE offer_id = $1 AND state = 'accepting'", [.text(offerId)])
        }
    }

    public func close(_ offerId: String, _ ending: OfferEnding, unlessAccepting: Bool) async throws -> OfferRecord? {
        let at = seconds(now())
        return try await store.write { db in
            guard let record = try Self.record(offerId, in: db), record.ending == nil,
                !(unlessAccepting && record.accepting)
            else { return nil }
            let changed = try db.run(
                "UPDATE offers SET state = $2, ended_at = $3 WHERE offer_id = $1 AND state = $4",
                [.text(offerId), .text(ending.rawValue), at, .text(record.storedState)])
            return changed == 1 ? record : nil
        }
    }

    public func offer(id: String) throws -> OfferRecord? { try store.read { try Self.record(id, in: $0) } }

    public func liveOffer(heldBy provider: String) -> OfferRecord? { first("provider_id", provider) }

    public func liveOffer(forTrip tripId: String) -> OfferRecord? { first("trip_id", tripId) }

    public func holders() -> Set<String> {
        let ids = try? store.read { db in
            try db.query("SELECT provider_id FROM offers WHERE state IN ('live', 'accepting')").compactMap {
                $0.text(0)
            }
        }
        return Set(ids ?? [])
    }

    public func purge(endedBefore cutoff: Date) async throws {
        try await store.perform { db in try db.run("DELETE FROM offers WHERE ended_at < $1", [seconds(cutoff)]) }
    }

    public func claimSearch(_ tripId: String, node: String, until: Date, now: Date) async throws -> Bool {
        // With the database's clock, a lease runs out by it: `until` and `now` keep their distance from each other.
        let expiry = databaseClock ? "extract(epoch FROM clock_timestamp())" : "$4::double precision"
        let lifetime = until.timeIntervalSince(now)
        let values: [PostgresValue] =
            databaseClock
            ? [.text(tripId), .text(node), .double(lifetime)]
            : [.text(tripId), .text(node), seconds(until), seconds(now)]
        let ends =
            databaseClock ? "extract(epoch FROM clock_timestamp()) + $3::double precision" : "$3::double precision"
        return try await store.write { db in
            try db.run(
                """
                INSERT INTO dispatch_searches AS held (trip_id, node, expires_at) VALUES ($1, $2, \(ends))
                ON CONFLICT (trip_id) DO UPDATE SET node = EXCLUDED.node, expires_at = EXCLUDED.expires_at
                WHERE held.node = EXCLUDED.node OR held.expires_at < \(expiry)
                """, values) == 1
        }
    }

    public func renewSearches(node: String, until: Date) async throws {
        let at = seconds(until), lifetime = until.timeIntervalSince(now()), databaseClock = self.databaseClock
        try await store.write { db in
            if databaseClock {
                try db.run(
                    "UPDATE dispatch_searches SET expires_at = extract(epoch FROM clock_timestamp()) + $2::double "
                        + "precision WHERE node = $1",
                    [.text(node), .double(lifetime)])
            } else {
                try db.run("UPDATE dispatch_searches SET expires_at = $2 WHERE node = $1", [.text(node), at])
            }
        }
    }

    public func searchesHeldElsewhere(than node: String, now: Date) async throws -> Set<String> {
        let expiry = databaseClock ? "extract(epoch FROM clock_timestamp())" : "$2::double precision"
        let values: [PostgresValue] = databaseClock ? [.text(node)] : [.text(node), seconds(now)]
        return try await store.perform { db in
            Set(
                try db.query(
                    "SELECT trip_id FROM dispatch_searches WHERE node <> $1 AND expires_at >= \(expiry)", values
                ).compactMap { $0.text(0) })
        }
    }

    public func releaseSearch(_ tripId: String, node: String) async throws {
        try await store.write { db in
            try db.run("DELETE FROM dispatch_searches WHERE trip_id = $1 AND node = $2", [.text(tripId), .text(node)])
        }
    }

    private func first(_ column: String, _ value: String) -> OfferRecord? {
        (try? store.read { db in
            try db.query(
                "SELECT \(Self.columns) FROM offers WHERE \(column) = $1 AND state IN ('live', 'accepting')",
                [.text(value)]
            )
            .first.flatMap(Self.decode)
        }) ?? nil
    }

    private static func record(_ offerId: String, in db: PostgresConnection) throws -> OfferRecord? {
        try db.query("SELECT \(columns) FROM offers WHERE offer_id = $1", [.text(offerId)]).first.flatMap(decode)
    }

    private static func decode(_ row: PostgresRow) throws -> OfferRecord? {
        let offer = try WireCoding.decoder().decode(Offer.self, from: Data((row.text(0) ?? "").utf8))
        return OfferRecord(offer: offer, providerId: row.text(1) ?? "", storedState: row.text(2) ?? "")
    }
}
