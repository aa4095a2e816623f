public import EnRouteModels

/// Hears of a chat message whose recipient has no chat socket open, to reach their devices another way (a push).
public protocol ChatNotifier: Sendable {
    /// `message` was stored and `recipient` (an account id) is not connected to the trip's chat.
    func deliverOffline(_ message: ChatMessage, to recipient: String) async
}
