import AppleAdapters
import EnRouteModels
import Observation
import ProviderKit
import RideHailing

/// The shift's wiring: online and offline, the work that runs while online, and each event of the provider feed
/// handed to the kit model that owns it (an offer to a new card, a trip to the trip screen). It decides nothing.
@MainActor @Observable
final class CourierShift {
    /// True once the server has confirmed the courier is online.
    private(set) var isOnline = false
    /// The offer on screen, if any.
    private(set) var offer: OfferViewModel?
    /// What the courier should know about the shift (offline, location off, the feed reconnecting).
    private(set) var notice: String?

    @ObservationIgnored private let session: ProviderSession
    @ObservationIgnored private let buffer: PointBuffer
    @ObservationIgnored private let engine: StepSyncEngine
    @ObservationIgnored private let uploader: LocationUploader
    @ObservationIgnored private let proofs: ProofCaptureQueue
    @ObservationIgnored private let location: ProviderBackgroundLocation
    @ObservationIgnored private let trip: ProviderTripViewModel
    @ObservationIgnored private let card: @MainActor (Offer) -> OfferViewModel

    init(
        session: ProviderSession, buffer: PointBuffer, engine: StepSyncEngine, uploader: LocationUploader,
        proofs: ProofCaptureQueue, location: ProviderBackgroundLocation, trip: ProviderTripViewModel,
        card: @escaping @MainActor (Offer) -> OfferViewModel
    ) {
        self.session = session
        self.buffer = buffer
        self.engine = engine
        self.uploader = uploader
        self.proofs = proofs
        self.location = location
        self.trip = trip
        self.card = card
    }

    /// Tells the server the courier is available, at the last kept position.
    func goOnline() async {
        do {
            try await session.goOnline(at: buffer.lastKeptFix?.coordinate)
            isOnline = await session.isOnline
            notice = nil
        } catch {
            notice = "Could not go online: \(error.localizedDescription)"
        }
    }

    /// Tells the server the courier is no longer available.
    func goOffline() async {
        do {
            try await session.goOffline()
            isOnline = await session.isOnline
        } catch {
            notice = "Could not go offline: \(error.localizedDescription)"
        }
    }

    /// Runs while online (the caller's task): sends steps, positions and proofs, reads positions into the buffer and
    /// the trip's guidance, and follows the feed. Returns when the task is cancelled.
    func run() async {
        let engine = self.engine, uploader = self.uploader, proofs = self.proofs
        trip.load()
        await trip.start()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await engine.run() }
            group.addTask { await uploader.run() }
            group.addTask { _ = await proofs.sync() }
            group.addTask { await self.readPositions() }
            group.addTask { await self.followFeed() }
        }
        trip.stop()
    }

    /// The offer card's answer: an accepted trip goes to the trip screen; any final answer closes the card.
    func offerChanged(_ phase: OfferViewState.Phase) {
        switch phase {
        case .accepted(let accepted):
            trip.receive(accepted)
            offer = nil
        case .declined, .expired, .gone:
            offer = nil
        case .open, .accepting:
            break
        }
    }

    private func readPositions() async {
        let trip = self.trip
        do {
            try await location.run { fix in await trip.locationChanged(fix) }
        } catch LocationError.denied {
            notice = "Allow EnRoute to use your location Always in Settings: offers need your position."
        } catch {
            notice = "Your position is unavailable. Go offline and online again to retry."
        }
    }

    private func followFeed() async {
        for await update in session.updates() {
            switch update {
            case .event(.offer(let new)):
                offer = card(new)
            case .event(.offerWithdrawn(let gone)):
                if offer?.state.offer.offerId == gone.offerId { offer?.withdraw() }
            case .event(.tripUpdated(let snapshot)):
                trip.receive(snapshot)
            case .disconnected(let reason, _):
                notice = "Reconnecting to offers: \(reason)"
            }
        }
    }
}
