/// The root's tabs.
public enum AppTab: String, Hashable, Sendable, CaseIterable {
    case home, orders, account
}
