import SwiftUI

/// The courier's app: go online, answer offers, drive the trip with guidance, report its steps, prove the delivery.
@main
struct CourierApp: App {
    /// The composition root, made once for the app's life.
    @State private var dependencies = CourierDependencies.launch()

    var body: some Scene {
        WindowGroup {
            NavigationStack {
                ShiftView(shift: dependencies.shift, trip: dependencies.trip, proofs: dependencies.proofs)
            }
        }
    }
}
