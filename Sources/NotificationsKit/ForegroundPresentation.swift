/// How a push that arrives while the app is open is shown.
public enum ForegroundPresentation: Equatable, Sendable {
    /// Banner, list and sound.
    case banner
    /// Nothing shown: the screen already on display refreshes instead.
    case refreshOnly
}
