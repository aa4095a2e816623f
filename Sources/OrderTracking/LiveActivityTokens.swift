public import Foundation

/// Data-internal: card 8's promise.
public protocol LiveActivityTokens: Sendable {
    /// Uploads an ActivityKit push token. Retried until it lands or the order ends.
    func send(_ token: Data, for order: OrderID) async throws
}
