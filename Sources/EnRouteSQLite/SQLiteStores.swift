public import Foundation
public import EnRouteStores

/// Every store of a node in one SQLite file.
public enum SQLiteStores {
    /// Opens (creating and migrating) the file at `path`; proof bytes go to `proofDirectory`, or beside the file. The
    /// write-ahead log is copied into the file once it reaches `checkpointPages`.
    public static func open(
        path: String, proofDirectory: String? = nil, checkpointPages: Int = 1_000, now: @escaping @Sendable () -> Date
    ) throws -> Stores {
        let trips = try SQLiteTripStore(path: path, checkpointPages: checkpointPages, now: now)
        let notifications = try SQLiteNotificationRepository(path: path)
        let directory = try SQLiteDirectory(path: path, now: now)
        return Stores(
            trips: trips, paths: try SQLitePathStore(tripStore: trips),
            offers: try SQLiteOfferStore(tripStore: trips, now: now),
            quotes: try SQLiteQuoteStore(tripStore: trips, now: now),
            paymentMethods: try SQLitePaymentMethodStore(tripStore: trips, now: now),
            etaSamples: try SQLiteEtaSampleStore(tripStore: trips, now: now),
            chat: try SQLiteChatStore(tripStore: trips, now: now),
            shareLinks: try SQLiteShareLinkStore(tripStore: trips, now: now),
            contactSessions: try SQLiteContactSessionStore(tripStore: trips, now: now),
            proofUploads: try SQLiteProofUploadStore(tripStore: trips, now: now),
            blobs: try DiskBlobStore(directory: URL(fileURLWithPath: proofDirectory ?? path + ".blobs")),
            directory: directory, phones: directory, devices: notifications, ledger: notifications,
            schemaVersion: trips.schemaVersion)
    }
}
