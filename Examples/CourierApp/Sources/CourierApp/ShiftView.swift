import AppleAdapters
import ProviderKit
import SwiftUI

/// The shift: online and offline, the trip on screen, and an offer's card over it while one is open. The work that
/// runs while online lives in this view's task, so it stops when the courier goes offline.
struct ShiftView: View {
    let shift: CourierShift
    let trip: ProviderTripViewModel
    let proofs: ProofCaptureQueue

    var body: some View {
        TripScreen(model: trip, proofs: proofs)
            .safeAreaInset(edge: .top) {
                if let notice = shift.notice {
                    Text(notice).font(.callout).padding(8).frame(maxWidth: .infinity)
                        .background(.orange.opacity(0.2))
                }
            }
            .navigationTitle(shift.isOnline ? "Online" : "Offline")
            .toolbar {
                ToolbarItem(placement: .primaryAction) {
                    if shift.isOnline {
                        Button("Go offline") { Task { await shift.goOffline() } }
                    } else {
                        Button("Go online") { Task { await shift.goOnline() } }
                    }
                }
            }
            .task(id: shift.isOnline) {
                guard shift.isOnline else { return }
                await shift.run()
            }
            .sheet(isPresented: Binding(get: { shift.offer != nil }, set: { _ in })) {
                if let offer = shift.offer {
                    ProviderOfferCard(model: offer)
                        .onChange(of: offer.state.phase) { _, phase in shift.offerChanged(phase) }
                        .presentationDetents([.medium])
                        .interactiveDismissDisabled()
                }
            }
    }
}
