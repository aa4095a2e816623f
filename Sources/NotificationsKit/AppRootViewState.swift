/// The root's selected tab and the navigation path of that tab.
public struct AppRootViewState: Equatable, Sendable {
    public let tab: AppTab
    public let path: [Route]
    public init(tab: AppTab, path: [Route]) { self.tab = tab; self.path = path }

    /// The path of `tab`'s own navigation stack: the path for the selected tab, empty for every other tab (a tab
    /// that is not shown keeps no screens pushed, so another tab's route never appears in it).
    public func path(in tab: AppTab) -> [Route] { tab == self.tab ? path : [] }
}
