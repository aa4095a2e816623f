/// What the root screen draws: the selected tab and the navigation path.
public struct AppRootViewState: Equatable, Sendable {
    public let tab: AppTab
    public let path: [Route]
    public init(tab: AppTab, path: [Route]) { self.tab = tab; self.path = path }
}
