public import Foundation

/// The server's record of device tokens: one account per token, the registration time kept.
public protocol DeviceRepository: Sendable {
    /// Inserts or replaces the token's record; registering it under another account moves it.
    func register(_ device: DeviceRecord) async throws
    /// Removes the token if it belongs to `accountId`; true when something was removed.
    @discardableResult
    func remove(token: String, accountId: String) async throws -> Bool
    /// Removes the token unless it was registered again after `invalidSince` (APNs 410); true when removed.
    @discardableResult
    func removeUnlessRegistered(after invalidSince: Date, token: String) async throws -> Bool
    /// The account's devices, newest registration first.
    func devices(accountId: String) async throws -> [DeviceRecord]
    /// One token's record.
    func device(token: String) async throws -> DeviceRecord?
}
