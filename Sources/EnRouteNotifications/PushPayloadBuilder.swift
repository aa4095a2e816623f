public import Foundation
import EnRouteCrypto
import EnRouteModels
import EnRouteDomain

/// Builds the exact APNs payloads of order updates, Live Activities, offers, chat messages and booking reminders.
public struct PushPayloadBuilder: Sendable {
    /// APNs' limit for everything but VoIP.
    public static let maximumPayloadBytes = 4096
    /// The HPKE `info` both sides use for the `secret` field.
    public static let secretInfo = Array("EnRoute push secret v1".utf8)

    /// Why a payload could not be built.
    public enum BuildError: Error, Equatable { case tooLarge(Int), incomplete(String) }

    public init() {}

    /// The order update for one device. `secret` is the rider's first name sealed with HPKE to the
    /// device's public key, with the notification id as associated data; base64 of enc ‖ ciphertext.
    public func orderUpdate(_ job: PushJob, device: DeviceRecord) throws -> [UInt8] {
        guard let stage = job.stage, let notificationId = job.notificationId else {
            throw BuildError.incomplete("stage and notificationId")
        }
        var aps: [String: Any] = [
            "alert": ["title": stage.title, "body": stage.genericBody],
            "mutable-content": 1,
            "category": "ORDER_UPDATE",
            "thread-id": "order-\(job.orderId)",
        ]
        if stage.isTimeSensitive { aps["interruption-level"] = "time-sensitive" }
        var root: [String: Any] = [
            "aps": aps,
            "notificationId": notificationId,
            "accountId": job.accountId,
            "route": "orders/\(job.orderId)",
            "orderVersion": job.orderVersion,
        ]
        if let name = job.riderFirstName, let key = device.publicKey, key.count == X25519.keyLength {
            let sealed = try HPKE.seal(
                Array(name.utf8), to: key, info: Self.secretInfo, aad: Array(notificationId.utf8))
            root["secret"] = Data(sealed).base64EncodedString()
        }
        if let image = job.imageUrl { root["imageUrl"] = image }
        return try Self.encode(root)
    }

    /// The ActivityKit push: `update` with a stale-date, or `end` with the final content.
    public func liveActivity(_ job: PushJob) throws -> [UInt8] {
        guard let event = job.event, let timestamp = job.timestamp,
            let status = job.status.flatMap(OrderStatusWire.init)
        else {
            throw BuildError.incomplete("event, timestamp and status")
        }
        // The app's widget decodes this into the same type.
        let content = OrderActivityContentState(status: status, etaLatest: job.etaLatest, stopsBefore: job.stopsBefore)
        let state = try JSONSerialization.jsonObject(with: WireCoding.encoder().encode(content))
        var aps: [String: Any] = ["timestamp": timestamp, "event": event, "content-state": state]
        if let stale = job.staleDate { aps["stale-date"] = stale }
        return try Self.encode(["aps": aps])
    }

    /// The offer alert for its provider (category `OFFER`, "See offer"): the offer's fields at the top level
    /// under the live stream's wire names, so the app decodes a push and an `offer` event alike.
    public func offer(_ job: PushJob) throws -> [UInt8] {
        guard let offer = job.offer, let notificationId = job.notificationId else {
            throw BuildError.incomplete("offer and notificationId")
        }
        guard var root = try JSONSerialization.jsonObject(with: WireCoding.encoder().encode(offer)) as? [String: Any]
        else {
            throw BuildError.incomplete("offer")
        }
        root["aps"] =
            [
                "alert": [
                    "title": "New trip offer",
                    "body": "A trip is waiting for you. Tap to see it before the offer runs out.",
                ],
                "category": "OFFER",
                "thread-id": "offers",
                // The offer lasts seconds: it breaks through Focus like "rider arriving".
                "interruption-level": "time-sensitive",
            ] as [String: Any]
        root["notificationId"] = notificationId
        root["accountId"] = job.accountId
        root["route"] = "offers/\(offer.offerId)"
        return try Self.encode(root)
    }

    /// A chat message for one device (category `CHAT_MESSAGE`): the alert is generic ("New message"), and the text
    /// travels only in `secret`, sealed exactly as the order update's rider name is (HPKE to the device's key, the
    /// notification id as associated data). A device without a key gets the generic alert alone.
    public func chatMessage(_ job: PushJob, device: DeviceRecord) throws -> [UInt8] {
        guard let text = job.chatText, let notificationId = job.notificationId, let seq = job.chatSeq else {
            throw BuildError.incomplete("chatText, chatSeq and notificationId")
        }
        var root: [String: Any] = [
            "aps": [
                "alert": ["title": "New message", "body": Self.chatGenericBody(from: job.chatFrom)],
                "mutable-content": 1,
                "category": "CHAT_MESSAGE",
                "thread-id": "chat-\(job.orderId)",
            ] as [String: Any],
            "notificationId": notificationId,
            "accountId": job.accountId,
            "route": "trips/\(job.orderId)/chat",
            "tripId": job.orderId,
            "seq": seq,
        ]
        if let key = device.publicKey, key.count == X25519.keyLength {
            let sealed = try HPKE.seal(
                Array(text.utf8), to: key, info: Self.secretInfo, aad: Array(notificationId.utf8))
            root["secret"] = Data(sealed).base64EncodedString()
        }
        return try Self.encode(root)
    }

    /// A reminder about a trip booked ahead for its customer (category `BOOKING`): a plain alert naming the booked
    /// time, threaded with the trip's order updates; it opens the order for a delivery.
    public func booking(_ job: PushJob) throws -> [UInt8] {
        guard let moment = job.booking, let kind = job.bookedKind, let time = job.bookedTime,
            let notificationId = job.notificationId
        else {
            throw BuildError.incomplete("booking, bookedKind, bookedTime and notificationId")
        }
        let root: [String: Any] = [
            "aps": [
                "alert": ["title": moment.title(kind), "body": moment.body(kind, at: time)],
                "category": "BOOKING",
                "thread-id": "order-\(job.orderId)",
            ] as [String: Any],
            "notificationId": notificationId,
            "accountId": job.accountId,
            "route": kind == .delivery ? "orders/\(job.orderId)" : "trips/\(job.orderId)",
            "tripId": job.orderId,
            "orderVersion": job.orderVersion,
        ]
        return try Self.encode(root)
    }

    /// The visible line of a chat push: who wrote, never what.
    static func chatGenericBody(from: ChatRole?) -> String {
        switch from {
        case .customer: "Your customer sent you a message."
        case .provider: "Your driver or courier sent you a message."
        case nil: "You have a new message about your trip."
        }
    }

    /// `apns-collapse-id` for a trip's chat: `chat-{id}`, so a device shows the newest message of a conversation.
    public static func collapseID(chatTripId tripId: String) -> String { bounded("chat", tripId, suffix: "") }

    /// `apns-collapse-id` for an order stage: `order-{id}-{stage}`, hashed down when over 64 bytes.
    public static func collapseID(orderId: String, stage: OrderStage) -> String {
        bounded("order", orderId, suffix: "-\(stage.rawValue)")
    }

    /// `apns-collapse-id` for a booked trip's reminders: `booking-{id}`, so its outcome replaces "finding your driver".
    public static func collapseID(bookingTripId tripId: String) -> String { bounded("booking", tripId, suffix: "") }

    /// `apns-collapse-id` for an offer: `offer-{id}`, hashed down when over 64 bytes.
    public static func collapseID(offerId: String) -> String { bounded("offer", offerId, suffix: "") }

    private static func bounded(_ prefix: String, _ id: String, suffix: String) -> String {
        let full = "\(prefix)-\(id)\(suffix)"
        if full.utf8.count <= 64 { return full }
        let digest = Digest.hex(Digest.sha256(Array(id.utf8)).prefix(12))
        return "\(prefix)-\(digest)\(suffix)"
    }

    /// A stable lowercase UUID for (message, token), so a retried push keeps its `apns-id`.
    public static func apnsID(message: String, token: String) -> String {
        let b = Digest.hex(Digest.sha256(Array("\(message)|\(token)".utf8)))
        let c = Array(b)
        return
            "\(String(c[0..<8]))-\(String(c[8..<12]))-4\(String(c[13..<16]))-a\(String(c[17..<20]))-"
            + String(c[20..<32])
    }

    private static func encode(_ object: [String: Any]) throws -> [UInt8] {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        guard data.count <= maximumPayloadBytes else { throw BuildError.tooLarge(data.count) }
        return Array(data)
    }
}
