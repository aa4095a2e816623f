import AppleAdapters
import ProviderKit
import SwiftUI

/// The trip on screen: its status, the next planned stop when carrying several orders, the guidance to it, the next
/// step's button (the delivery's through a photo), and the explanation after a refused step. Everything shown is the
/// model's state.
struct TripScreen: View {
    let model: ProviderTripViewModel
    let proofs: ProofCaptureQueue

    var body: some View {
        let state = model.state
        if let trip = state.trip {
            List {
                Section("Trip \(trip.id)") {
                    LabeledContent("Status", value: trip.displayedStatus)
                    if let next = state.nextStopText { Label(next, systemImage: "mappin.and.ellipse") }
                    if state.isSyncing { Label("Sending…", systemImage: "arrow.up.circle") }
                    if let notice = state.notice { Text(notice).foregroundStyle(.orange) }
                }
                if let guidance = state.guidance {
                    Section("Next") {
                        Text(guidance.instruction).font(.title3.bold())
                        LabeledContent(
                            "To the stop",
                            value: Measurement(
                                value: guidance.remainingMeters,
                                unit: UnitLength.meters),
                            format: .measurement(width: .abbreviated, usage: .road))
                        LabeledContent(
                            "Time", value: Duration.seconds(guidance.remainingSeconds),
                            format: .units(allowed: [.hours, .minutes], width: .abbreviated))
                    }
                }
                if let step = state.nextStep {
                    Section {
                        if step == .delivered {
                            ProofCaptureButton(tripID: trip.id, proofs: proofs) { proofID in
                                model.reportStep(.delivered, proofId: proofID)
                            }
                        } else {
                            Button(StepRejectionNotice.label(step)) { model.reportStep() }
                                .buttonStyle(.borderedProminent)
                        }
                    }
                }
            }
        } else {
            ContentUnavailableView(
                "No trip", systemImage: "bicycle",
                description: Text("Go online: offers appear here."))
        }
    }
}
