import EnRouteModels
import PhotosUI
import ProviderKit
import SwiftUI
import UniformTypeIdentifiers

/// The delivery's proof: a photo kept in the device store at once (so it survives a lost network or a restart), the
/// `delivered` step naming it, then an upload; what is left goes the next time the courier goes online.
struct ProofCaptureButton: View {
    let tripID: String
    let proofs: ProofCaptureQueue
    /// Reports the delivery with the kept proof's id.
    let delivered: (String) -> Void
    /// The picked photo: this control's own input.
    @State private var item: PhotosPickerItem?
    @State private var failure: String?

    var body: some View {
        PhotosPicker("Photo of the delivery", selection: $item, matching: .images, preferredItemEncoding: .compatible)
            .buttonStyle(.borderedProminent)
            .onChange(of: item) { _, picked in
                guard let picked else { return }
                Task { await keep(picked) }
            }
        if let failure { Text(failure).foregroundStyle(.red) }
    }

    private func keep(_ picked: PhotosPickerItem) async {
        do {
            guard let data = try await picked.loadTransferable(type: Data.self) else { return }
            let contentType = picked.supportedContentTypes.first?.preferredMIMEType ?? "image/jpeg"
            let proofID = try proofs.capture([UInt8](data), kind: .photo, contentType: contentType, tripId: tripID)
            delivered(proofID)
            _ = await proofs.sync()
        } catch {
            failure = "The photo could not be kept: \(error.localizedDescription)"
        }
    }
}
