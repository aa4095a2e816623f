public import Foundation
public import EnRouteStores

/// Every store of a node in one PostgreSQL database, on one pool.
public enum PostgresStores {
    /// Connects to `url` (in `schema`, when given), migrating it; proof bytes go to `proofDirectory`, or to a scratch
    /// folder of the database and schema. With `databaseClock`, offers expire by the database's clock.
    public static func open(
        url: String, schema: String? = nil, poolLimits: PostgresPoolLimits, databaseClock: Bool,
        proofDirectory: String? = nil,
        now: @escaping @Sendable () -> Date
    ) throws -> Stores {
        let trips = try PostgresTripStore(
            url: url, schema: schema, poolLimits: poolLimits, databaseClock: databaseClock, now: now)
        let notifications = try PostgresNotificationRepository(tripStore: trips, now: now)
        let directory = try PostgresDirectory(tripStore: trips, now: now)
        return Stores(
            trips: trips, paths: PostgresPathStore(tripStore: trips),
            offers: try PostgresOfferStore(tripStore: trips, databaseClock: databaseClock, now: now),
            quotes: try PostgresQuoteStore(tripStore: trips, now: now),
            paymentMethods: try PostgresPaymentMethodStore(tripStore: trips, now: now),
            etaSamples: try PostgresEtaSampleStore(tripStore: trips, now: now),
            chat: try PostgresChatStore(tripStore: trips, now: now),
            shareLinks: try PostgresShareLinkStore(tripStore: trips, now: now),
            contactSessions: try PostgresContactSessionStore(tripStore: trips, now: now),
            proofUploads: try PostgresProofUploadStore(tripStore: trips, now: now),
            blobs: try DiskBlobStore(
                directory: proofDirectory.map(URL.init(fileURLWithPath:))
                    ?? scratchBlobFolder(url: url, schema: schema)),
            directory: directory, phones: directory, devices: notifications, ledger: notifications,
            schemaVersion: trips.schemaVersion, close: { trips.close() })
    }

    /// Where proof bytes go without a `proofDirectory`: one folder per database and schema.
    static func scratchBlobFolder(url: String, schema: String?) -> URL {
        let name = (url + "|" + (schema ?? "")).unicodeScalars.map {
            CharacterSet.alphanumerics.contains($0) ? String($0) : "_"
        }.joined()
        return FileManager.default.temporaryDirectory.appendingPathComponent("enroute-proofs-" + name.suffix(80))
    }
}
