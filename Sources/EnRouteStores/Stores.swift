public import Foundation
public import EnRouteDomain
public import EnRouteNotifications

/// Every store a node keeps, opened together on one storage engine: the trips and what hangs off them, the directory,
/// the notifications. Each engine's module opens one (`SQLiteStores.open`, `PostgresStores.open`, `Stores.memory`), so
/// the composition root picks an engine in one line.
public struct Stores: Sendable {
    public var trips: any TripStore
    public var paths: any PathStore
    public var offers: any OfferStore
    public var quotes: any QuoteStore
    public var paymentMethods: any PaymentMethodStore
    public var etaSamples: any EtaSampleStore
    public var chat: any ChatStore
    public var shareLinks: any ShareLinkStore
    public var contactSessions: any ContactSessionStore
    public var proofUploads: any ProofUploadStore
    /// Where proof bytes go (a folder on disk, or memory).
    public var blobs: any BlobStore
    public var directory: any DirectoryRepository
    /// The parties' phone numbers, kept with the directory.
    public var phones: any PhoneBook
    public var devices: any DeviceRepository
    public var ledger: any NotificationLedger
    /// The schema version of the database, nil in memory.
    public var schemaVersion: Int?
    /// Closes the engine's connections; a no-op for memory and SQLite.
    public var close: @Sendable () -> Void

    /// A bundle of the given stores.
    public init(
        trips: any TripStore, paths: any PathStore, offers: any OfferStore, quotes: any QuoteStore,
        paymentMethods: any PaymentMethodStore, etaSamples: any EtaSampleStore, chat: any ChatStore,
        shareLinks: any ShareLinkStore, contactSessions: any ContactSessionStore, proofUploads: any ProofUploadStore,
        blobs: any BlobStore, directory: any DirectoryRepository, phones: any PhoneBook, devices: any DeviceRepository,
        ledger: any NotificationLedger, schemaVersion: Int?, close: @escaping @Sendable () -> Void = {}
    ) {
        self.trips = trips; self.paths = paths; self.offers = offers; self.quotes = quotes
        self.paymentMethods = paymentMethods; self.etaSamples = etaSamples; self.chat = chat
        self.shareLinks = shareLinks; self.contactSessions = contactSessions; self.proofUploads = proofUploads
        self.blobs = blobs; self.directory = directory; self.phones = phones; self.devices = devices
        self.ledger = ledger; self.schemaVersion = schemaVersion; self.close = close
    }

    /// Every store in memory: nothing outlives the process (tests, the demo without a file).
    public static func memory() -> Stores {
        let trips = InMemoryTripStore()
        let directory = InMemoryDirectory()
        return Stores(
            trips: trips, paths: InMemoryPathStore(),
            offers: InMemoryOfferStore(tripWaiting: { id in (try? trips.trip(id: id))?.waitsForProvider ?? false }),
            quotes: InMemoryQuoteStore(), paymentMethods: InMemoryPaymentMethodStore(),
            etaSamples: InMemoryEtaSampleStore(), chat: InMemoryChatStore(), shareLinks: InMemoryShareLinkStore(),
            contactSessions: InMemoryContactSessionStore(), proofUploads: InMemoryProofUploadStore(),
            blobs: InMemoryBlobStore(), directory: directory, phones: directory, devices: InMemoryDeviceRepository(),
            ledger: InMemoryNotificationLedger(), schemaVersion: nil)
    }
}
