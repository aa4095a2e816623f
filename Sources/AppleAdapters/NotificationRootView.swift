// Apple platforms only: the root screen, a tab view with a NavigationStack bound to AppRootViewModel. No logic.
#if canImport(SwiftUI) && canImport(UIKit)
import SwiftUI
import NotificationsKit

/// Draws the tabs and the path; decides nothing. Universal links arrive through onOpenURL as the same Route.
struct NotificationRootView<Destination: View>: View {
    @State var viewModel: AppRootViewModel
    let destination: (Route) -> Destination

    var body: some View {
        TabView(selection: Binding(get: { viewModel.viewState.tab }, set: { viewModel.select($0) })) {
            ForEach(AppTab.allCases, id: \.self) { tab in
                NavigationStack(path: Binding(get: { viewModel.viewState.path }, set: { viewModel.pathChanged($0) })) {
                    Text(tab.rawValue.capitalized).navigationDestination(for: Route.self, destination: destination)
                }
                .tag(tab)
                .tabItem { Text(tab.rawValue.capitalized) }
            }
        }
        .task { await viewModel.onAppear() }
        .onOpenURL { url in
            if let route = Route(path: url.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))) { viewModel.open(route) }
        }
    }
}
#endif
