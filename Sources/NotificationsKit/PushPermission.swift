/// The app's notification permission as the domain sees it.
public enum PushPermission: Equatable, Sendable {
    /// Never asked.
    case notAsked
    /// Provisional: delivered quietly to Notification Center.
    case quiet
    /// Allowed after the real prompt (or in Settings).
    case allowed
    /// Denied; only Settings can change it now.
    case denied
}
