public import Foundation
public import EnRouteModels
public import EnRouteDomain

/// What one outbox message asks the sender to do; stored as JSON in the outbox.
public struct PushJob: Codable, Sendable, Equatable {
    /// The kinds of push the outbox carries.
    public enum Kind: String, Codable, Sendable { case orderUpdate, liveActivity, offer, chatMessage, booking }

    public var kind: Kind
    /// The order (for an offer, the trip) the push is about.
    public var orderId: String
    /// Whose devices get it: the order's customer, or the provider an offer was made to.
    public var accountId: String
    public var orderVersion: Int
    /// Do not deliver after this time.
    public var expiresAt: Date

    // Order updates
    public var stage: OrderStage?
    public var notificationId: String?
    public var riderFirstName: String?
    public var imageUrl: String?

    // Live Activities
    public var liveActivityToken: String?
    /// "update" or "end".
    public var event: String?
    public var priority: Int?
    /// The snapshot's generatedAt, epoch seconds.
    public var timestamp: Int?
    public var staleDate: Int?
    /// The wire status shown on the card (`OrderStatusWire`'s raw value).
    public var status: String?
    public var etaLatest: Int?
    /// Stops the courier makes for other orders before this one (`TripRecord.stopsBefore`).
    public var stopsBefore: Int?

    // Offers
    /// The offer as the provider's live stream sent it.
    public var offer: Offer?

    // Chat messages
    /// The message's text: only ever sent sealed to the device's key, never in clear.
    public var chatText: String?
    /// Who wrote it, and its sequence in the trip's conversation.
    public var chatFrom: ChatRole?
    public var chatSeq: Int64?

    // Booking reminders (trips booked ahead)
    /// The moment the customer is told about.
    public var booking: BookingMoment?
    /// Whether the booked trip is a ride or a delivery.
    public var bookedKind: TripKind?
    /// The booked time on the clock shown to the customer ("08:30").
    public var bookedTime: String?

    public init(kind: Kind, orderId: String, accountId: String, orderVersion: Int, expiresAt: Date) {
        self.kind = kind; self.orderId = orderId; self.accountId = accountId; self.orderVersion = orderVersion;
        self.expiresAt = expiresAt
    }

    /// The push for an offer made to `provider`: it expires with the offer.
    public static func offer(_ offer: Offer, to provider: String) -> PushJob {
        var job = PushJob(
            kind: .offer, orderId: offer.tripId, accountId: provider, orderVersion: 0, expiresAt: offer.expiresAt)
        job.offer = offer
        job.notificationId = "offer.\(offer.offerId)"
        return job
    }

    /// The push for a chat message to `recipient`, who had no chat socket open; it is worth little after `lifetime`.
    public static func chat(_ message: ChatMessage, to recipient: String, lifetime: TimeInterval = 3600) -> PushJob {
        var job = PushJob(
            kind: .chatMessage, orderId: message.tripId, accountId: recipient, orderVersion: 0,
            expiresAt: message.sentAt.addingTimeInterval(lifetime))
        job.notificationId = "chat.\(message.tripId).\(message.seq)"
        job.chatText = message.text
        job.chatFrom = message.from
        job.chatSeq = message.seq
        return job
    }

    /// The outbox topic the APNs sender drains.
    public static let topic = "apns"

    /// The job as outbox bytes.
    public func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        return Array(try encoder.encode(self))
    }

    /// Reads outbox bytes.
    public static func decode(_ bytes: [UInt8]) throws -> PushJob {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(PushJob.self, from: Data(bytes))
    }
}
