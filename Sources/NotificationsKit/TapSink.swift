/// Data-internal: the engine's promise, where taps and account changes go in.
public protocol TapSink: Sendable {
    /// A tap the OS handed over.
    func receive(_ tap: NotificationTap) async
    /// The account signed out here: its pushes may still arrive (a family iPad offline), and their taps are dropped.
    func accountSignedOut(_ account: AccountID) async
    /// The account signed in here again: its taps count once more.
    func accountSignedIn(_ account: AccountID) async
}
