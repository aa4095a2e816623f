public import Foundation
public import EnRouteDomain
public import EnRouteModels
import SQLiteClient
import Synchronization

/// Offers on SQLite (`offers`, migrated by `offer_migrations`) in the trip database, written through the trip store's
/// writer: several nodes on one file share them. Partial unique indexes keep one open offer per trip and per provider
/// and one accepted offer per trip; an accept claims with one conditional update.
public final class SQLiteOfferStore: OfferStore, @unchecked Sendable {
    /// Schema migrations of the offer table, applied in order once each.
    static let migrations: [String] = [
        """
        CREATE TABLE offers (offer_id TEXT PRIMARY KEY, trip_id TEXT NOT NULL, provider_id TEXT NOT NULL, state \
        TEXT NOT NULL,
                             expires_at REAL NOT NULL, ended_at REAL, offer TEXT NOT NULL);
        CREATE UNIQUE INDEX offers_open_trip ON offers(trip_id) WHERE state IN ('live', 'accepting');
        CREATE UNIQUE INDEX offers_open_provider ON offers(provider_id) WHERE state IN ('live', 'accepting');
        CREATE UNIQUE INDEX offers_accepted_trip ON offers(trip_id) WHERE state = 'accepted';
        CREATE INDEX offers_ended ON offers(ended_at) WHERE ended_at IS NOT NULL;
        """,
        "CREATE TABLE dispatch_searches (trip_id TEXT PRIMARY KEY, node TEXT NOT NULL, expires_at REAL NOT NULL);",
    ]

    private let writer: SQLiteWriter
    private let reader: Mutex<SQLiteDatabase>
    private let now: @Sendable () -> Date
    private static let columns = "offer, provider_id, state"

    /// Opens (creating if needed) the offer table in `tripStore`'s database.
    public init(tripStore: SQLiteTripStore, now: @escaping @Sendable () -> Date) throws {
        writer = tripStore.writer
        self.now = now
        reader = try tripStore.companionReader(migrations: Self.migrations, table: "offer_migrations", appliedAt: now())
    }

    public func open(_ offer: Offer, to provider: String, now: Date) async throws -> Bool {
        let at = now.timeIntervalSince1970
        let json = String(decoding: try WireCoding.encoder().encode(offer), as: UTF8.self)
        return try await write { db in
            // Decided with the trip in hand: a trip assigned, taken or cancelled meanwhile is offered to nobody.
            let waiting = try db.query(
                "SELECT 1 FROM trips WHERE id = ?1 AND \(TripStatus.waitingForProviderSQL)", [.text(offer.tripId)]
            ) { _ in true }
            guard !waiting.isEmpty else { return false }
            // An offer of either past its time whose search died with its node ends here.
            // One statement per column, each stated so that it reads its partial index: with `trip_id = ? OR
            // provider_id
            // = ?` SQLite scanned every offer kept (a day's worth) on each open.
            for column in ["trip_id", "provider_id"] {
                try db.run(
                    """
                    UPDATE offers SET state = 'expired', ended_at = ?1
                    WHERE state IN ('live', 'accepting') AND state = 'live' AND \(column) = ?2 AND expires_at < ?1
                    """, [.real(at), .text(column == "trip_id" ? offer.tripId : provider)])
            }
            try db.run(
                "UPDATE offers SET state = 'returned' WHERE trip_id = ?1 AND state = 'accepted'", [.text(offer.tripId)])
            try db.run(
                """
                INSERT INTO offers (offer_id, trip_id, provider_id, state, expires_at, offer) VALUES (?1, ?2, ?3, \
                'live', ?4, ?5)
                ON CONFLICT DO NOTHING
                """,
                [
                    .text(offer.offerId), .text(offer.tripId), .text(provider),
                    .real(offer.expiresAt.timeIntervalSince1970), .text(json),
                ])
            return db.changes == 1
        }
    }

    public func claim(_ offerId: String, by provider: String, now: Date) async throws -> OfferClaim {
        let at = now.timeIntervalSince1970
        return try await write { db in
            try db.run(
                "UPDATE offers SET state = 'accepting' WHERE offer_id = ?1 AND provider_id = ?2 AND state = 'live' AND "
                    + "expires_at >= ?3",
                [.text(offerId), .text(provider), .real(at)])
            let claimed = db.changes == 1
            guard let record = try Self.record(offerId, in: db), record.providerId == provider else { return .notFound }
            if claimed { return .claimed(record) }
            if record.accepting { return .busy(tripId: record.offer.tripId) }
            if record.ending == nil {
                try db.run(
                    "UPDATE offers SET state = 'expired', ended_at = ?2 WHERE offer_id = ?1 AND state = 'live'",
                    [.text(offerId), .real(at)])
                var expired = record
                expired.ending = .expired
                return .ended(expired, justExpired: true)
            }
            return .ended(record, justExpired: false)
        }
    }

    public func unclaim(_ offerId: String) async throws {
        try await write { db in
            try db.run("UPDATE offers SET state = 'live' WHERE offer_id = ?1 AND state = 'accepting'", [.text(offerId)])
        }
    }

    public func close(_ offerId: String, _ ending: OfferEnding, unlessAccepting: Bool) async throws -> OfferRecord? {
        let at = now().timeIntervalSince1970
        return try await write { db in
            guard let record = try Self.record(offerId, in: db), record.ending == nil,
                !(unlessAccepting && record.accepting)
            else { return nil }
            try db.run(
                "UPDATE offers SET state = ?2, ended_at = ?3 WHERE offer_id = ?1 AND state = ?4",
                [.text(offerId), .text(ending.rawValue), .real(at), .text(record.storedState)])
            return db.changes == 1 ? record : nil
        }
    }

    public func offer(id: String) throws -> OfferRecord? { try reader.withLock { try Self.record(id, in: $0) } }

    public func liveOffer(heldBy provider: String) -> OfferRecord? { first("provider_id", provider) }

    public func liveOffer(forTrip tripId: String) -> OfferRecord? { first("trip_id", tripId) }

    public func holders() -> Set<String> {
        let ids = try? reader.withLock { db in
            try db.query("SELECT provider_id FROM offers WHERE state IN ('live', 'accepting')") { $0.text(0) ?? "" }
        }
        return Set(ids ?? [])
    }

    public func purge(endedBefore cutoff: Date) async throws {
        try await write { db in
            try db.run("DELETE FROM offers WHERE ended_at < ?1", [.real(cutoff.timeIntervalSince1970)])
        }
    }

    public func claimSearch(_ tripId: String, node: String, until: Date, now: Date) async throws -> Bool {
        try await write { db in
            try db.run(
                """
                INSERT INTO dispatch_searches (trip_id, node, expires_at) VALUES (?1, ?2, ?3)
                ON CONFLICT(trip_id) DO UPDATE SET node = excluded.node, expires_at = excluded.expires_at
                WHERE dispatch_searches.node = excluded.node OR dispatch_searches.expires_at < ?4
                """, [.text(tripId), .text(node), .real(until.timeIntervalSince1970), .real(now.timeIntervalSince1970)])
            return db.changes == 1
        }
    }

    public func renewSearches(node: String, until: Date) async throws {
        try await write { db in
            try db.run(
                "UPDATE dispatch_searches SET expires_at = ?2 WHERE node = ?1",
                [.text(node), .real(until.timeIntervalSince1970)])
        }
    }

    public func searchesHeldElsewhere(than node: String, now: Date) async throws -> Set<String> {
        try reader.withLock { db in
            Set(
                try db.query(
                    "SELECT trip_id FROM dispatch_searches WHERE node <> ?1 AND expires_at >= ?2",
                    [.text(node), .real(now.timeIntervalSince1970)]
                ) { $0.text(0) ?? "" })
        }
    }

    public func releaseSearch(_ tripId: String, node: String) async throws {
        try await write { db in
            try db.run("DELETE FROM dispatch_searches WHERE trip_id = ?1 AND node = ?2", [.text(tripId), .text(node)])
        }
    }

    private func first(_ column: String, _ value: String) -> OfferRecord? {
        try? reader.withLock { db in
            try db.query(
                "SELECT \(Self.columns) FROM offers WHERE \(column) = ?1 AND state IN ('live', 'accepting')",
                [.text(value)], Self.decode
            ).first
        } ?? nil
    }

    private func write<T>(_ work: @escaping (SQLiteDatabase) throws -> T) async throws -> T {
        try await writer.transaction { db in try work(db) }
    }

    private static func record(_ offerId: String, in db: SQLiteDatabase) throws -> OfferRecord? {
        try db.query("SELECT \(columns) FROM offers WHERE offer_id = ?1", [.text(offerId)], decode).first ?? nil
    }

    private static func decode(_ row: SQLiteStatement) throws -> OfferRecord? {
        let offer = try WireCoding.decoder().decode(Offer.self, from: Data((row.text(0) ?? "").utf8))
        return OfferRecord(offer: offer, providerId: row.text(1) ?? "", storedState: row.text(2) ?? "")
    }
}
