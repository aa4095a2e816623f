/// Decides when to ask for notification permission, and asks.
///
/// The rule: never interrupt a first launch; ask once, when it's obviously useful; after a no, offer Settings.
@MainActor
public protocol AskForPushUseCase {
    /// At launch: provisional, never a prompt.
    func askQuietly() async
    /// After the first order: the real prompt, once. Returns the result.
    /// Denied → the caller shows a Settings link instead.
    func askAfterFirstOrder() async -> PushPermission
}
