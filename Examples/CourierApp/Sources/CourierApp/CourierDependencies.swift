import AppleAdapters
import ClientKit
import EnRouteModels
import Foundation
import HTTPTransport
import ProviderKit

/// The composition root: every kit object the app uses, made once and wired together. Nothing here decides anything.
@MainActor
final class CourierDependencies {
    let api: RemoteProviderAPI
    let buffer: PointBuffer
    let engine: StepSyncEngine
    let uploader: LocationUploader
    let session: ProviderSession
    let trip: ProviderTripViewModel
    let proofs: ProofCaptureQueue
    let location: ProviderBackgroundLocation
    let shift: CourierShift

    /// The dependencies of this install: its settings, and its store in Application Support (which keeps unsent
    /// steps, positions and proofs across launches). A store that cannot open stops the app, saying why.
    static func launch() -> CourierDependencies {
        do {
            let directory = URL.applicationSupportDirectory
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return try CourierDependencies(
                configuration: .from(Bundle.main),
                storePath: directory.appendingPathComponent("provider.sqlite").path)
        } catch {
            preconditionFailure("The provider store could not open: \(error)")
        }
    }

    init(configuration: CourierConfiguration, storePath: String) throws {
        let http = URLSessionHTTPClient()
        let server = APIServer(baseURL: configuration.server, credentials: StaticAccessToken(configuration.accessToken))
        let clock = ContinuousClock()
        let dates = SystemDateProvider()
        let makeID: @Sendable () -> String = { UUID().uuidString.lowercased() }
        let api = RemoteProviderAPI(client: http, server: server)
        let store = try ProviderStore(path: storePath)
        let buffer = try PointBuffer(store: store, makeID: makeID)
        let engine = StepSyncEngine(
            outbox: StepOutbox(store: store, positions: buffer, dates: dates, makeID: makeID),
            api: api, clock: clock)
        let uploader = LocationUploader(buffer: buffer, api: api, clock: clock)
        let session = ProviderSession(api: api, clock: clock)
        let trip = ProviderTripViewModel(engine: engine, guidance: GuidanceSource(routes: api, dates: dates))
        let proofs = ProofCaptureQueue(store: store, client: http, server: server, makeID: makeID)
        let location = ProviderBackgroundLocation(buffer: buffer)
        self.api = api
        self.buffer = buffer
        self.engine = engine
        self.uploader = uploader
        self.session = session
        self.trip = trip
        self.proofs = proofs
        self.location = location
        shift = CourierShift(
            session: session, buffer: buffer, engine: engine, uploader: uploader, proofs: proofs,
            location: location, trip: trip
        ) { offer in
            OfferViewModel(offer: offer, api: api, clock: clock, dates: dates)
        }
    }
}
