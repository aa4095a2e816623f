/// Who is signed in, as the notification code needs to know it.
public protocol Session: Sendable {
    /// The signed-in account; nil when signed out (or still loading).
    func currentAccount() async -> AccountID?
}
