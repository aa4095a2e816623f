public import Foundation

/// A notification the sender handed to APNs (or the log), remembered so its opens can be judged and counted.
public struct SentNotification: Sendable, Equatable, Codable {
    public let id: String
    public let accountId: String
    /// "orderUpdates" or an offer campaign's name.
    public let campaign: String
    /// The order stage, or "" for campaigns without one.
    public let stage: String
    public let sentAt: Date

    public init(id: String, accountId: String, campaign: String, stage: String, sentAt: Date) {
        self.id = id; self.accountId = accountId; self.campaign = campaign; self.stage = stage; self.sentAt = sentAt
    }
}
