// iOS only: the root screen, a tab view with one navigation stack per tab, bound to AppRootViewModel. No logic.
#if canImport(SwiftUI) && canImport(UIKit)
public import SwiftUI
public import NotificationsKit

/// The app's root: one tab per `AppTab`, each with its own navigation stack, whose path is the model's path for that
/// tab. Notification taps arrive through the model; links (the app's scheme and its universal links) through
/// `onOpenURL`, parsed into the same `Route`. Draws and forwards; decides nothing.
public struct NotificationRootView<TabRoot: View, Destination: View>: View {
    private let viewModel: AppRootViewModel
    private let links: RouteLinks
    private let tabRoot: (AppTab) -> TabRoot
    private let destination: (Route) -> Destination

    /// A root over the app's `viewModel`, answering `links`; `tabRoot` draws each tab's first screen and
    /// `destination` the screen for each route pushed on a tab.
    public init(
        viewModel: AppRootViewModel, links: RouteLinks, @ViewBuilder tabRoot: @escaping (AppTab) -> TabRoot,
        @ViewBuilder destination: @escaping (Route) -> Destination
    ) {
        self.viewModel = viewModel
        self.links = links
        self.tabRoot = tabRoot
        self.destination = destination
    }

    /// The tabs, each in its navigation stack.
    public var body: some View {
        TabView(selection: Binding(get: { viewModel.viewState.tab }, set: { viewModel.select($0) })) {
            ForEach(AppTab.allCases, id: \.self) { tab in
                NavigationStack(
                    path: Binding(
                        get: { viewModel.viewState.path(in: tab) },
                        set: { viewModel.pathChanged($0, in: tab) })
                ) {
                    tabRoot(tab).navigationDestination(for: Route.self, destination: destination)
                }
                .tag(tab)
                .tabItem { Text(tab.rawValue.capitalized) }
            }
        }
        .task { await viewModel.onAppear() }
        .onOpenURL { url in
            if let route = Route(url: url, links: links) { viewModel.open(route) }
        }
    }
}
#endif
