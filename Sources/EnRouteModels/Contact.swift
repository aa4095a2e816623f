public import Foundation

/// `PUT /v1/account/phone` body and answer: the caller's own number, never shown to the other party.
public struct PhoneNumberBody: Codable, Sendable, Equatable {
    /// E.164, e.g. `+358401234567`.
    public let phoneNumber: String
    public init(phoneNumber: String) { self.phoneNumber = phoneNumber }
}

/// `POST /v1/trips/{id}/call` answer: the relay number this caller dials to reach the other party of the trip.
public struct TripCall: Codable, Sendable, Equatable {
    public let tripId: String
    /// The caller's own proxy number for the trip's session (E.164); it reaches the other party only.
    public let dial: String
    /// When the number stops connecting: set once the trip has ended (a stated time after its end).
    public let availableUntil: Date?
    public init(tripId: String, dial: String, availableUntil: Date?) {
        self.tripId = tripId; self.dial = dial; self.availableUntil = availableUntil
    }
}

/// What a proof of delivery is: a photo at the door, or the recipient's signature.
public enum ProofKind: String, Codable, Sendable, CaseIterable {
    case photo, signature

    /// The content types a proof of this kind may have.
    public var contentTypes: [String] {
        switch self {
        case .photo: ["image/jpeg", "image/png", "image/heic"]
        case .signature: ["image/svg+xml", "image/png"]
        }
    }

    /// The largest proof of this kind, in bytes.
    public var maxBytes: Int {
        switch self {
        case .photo: 10 * 1024 * 1024
        case .signature: 1024 * 1024
        }
    }
}
