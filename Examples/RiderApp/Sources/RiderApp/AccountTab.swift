import NotificationsKit
import SwiftUI
import UIKit

/// Account: who is signed in, and the notification permission with the one prompt the app shows.
struct AccountTab: View {
    let dependencies: RiderDependencies
    /// The permission as last read: this screen's own display, refreshed when it appears.
    @State private var permission: PushPermission?

    var body: some View {
        List {
            Section("Signed in as") { Text(dependencies.configuration.account.rawValue) }
            Section("Notifications") {
                switch permission {
                case .allowed?: Label("On", systemImage: "bell.fill")
                case .quiet?: Label("Delivered quietly", systemImage: "bell")
                case .denied?:
                    if let settings = URL(string: UIApplication.openSettingsURLString) {
                        Link("Turned off: change it in Settings", destination: settings)
                    }
                case .notAsked?, nil: EmptyView()
                }
                if permission == .notAsked || permission == .quiet {
                    Button("Allow notifications") {
                        Task { permission = await dependencies.askForPush.askAfterFirstOrder() }
                    }
                }
            }
        }
        .navigationTitle("Account")
        .task { permission = await dependencies.engine.current() }
    }
}
