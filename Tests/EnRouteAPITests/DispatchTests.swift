import Foundation
import Synchronization
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import TestSupport

/// Timed, exclusive offers, on a manual clock.
@Suite(.timeLimit(.minutes(1))) struct DispatchTests {
    func makeSUT(_ configure: (inout DispatchPolicy) -> Void = { _ in }) throws -> ProviderBackend {
        var policy = DispatchPolicy()
        configure(&policy)
        return try ProviderBackend(policy: policy)
    }

    /// Waits until the trip reaches `status` (published by the service), without sleeping.
    func waitFor(_ sut: ProviderBackend, _ tripId: String, status: String) async throws -> TripRecord {
        let updates = sut.service.hub.subscribe(tripId)
        if let trip = try sut.trip(tripId), trip.status.name == status { return trip }
        for await trip in updates where trip.status.name == status { return trip }
        throw Failure("the trip never reached \(status)")
    }

    func decodeTrip(_ body: [UInt8]) throws -> TripSnapshot {
        try WireCoding.decoder().decode(TripSnapshot.self, from: Data(body))
    }

    func decodeConflict(_ body: [UInt8]) throws -> ConflictProblem<TripSnapshot> {
        try WireCoding.decoder().decode(ConflictProblem<TripSnapshot>.self, from: Data(body))
    }

    @Test func theNearestOnlineIdleProviderGetsTheOfferFirst() async throws {
        let sut = try makeSUT()
        // p0 is nearest but busy on another trip, p9 is near but offline.
        let other = try await sut.requestRide("c0")
        #expect(await sut.assign(other.id, to: "p0").status == 200)
        await sut.online("p0", at: ProviderBackend.north(50))
        await sut.online("p9", at: ProviderBackend.north(80))
        await sut.offline("p9")
        await sut.online("far", at: ProviderBackend.north(3_000))
        await sut.online("near", at: ProviderBackend.north(400))
        var near = ProviderInbox(sut.providers, "near")
        let trip = try await sut.requestRide()
        let offer = try await near.offer()
        #expect(offer.tripId == trip.id)
        #expect(offer.pickup == trip.pickup && offer.dropoff == trip.dropoff)
        #expect(offer.expiresAt == sut.clock.date.addingTimeInterval(15))
        #expect(sut.providers.dispatcher.liveOffer(heldBy: "far") == nil)
        #expect(sut.providers.dispatcher.liveOffer(forTrip: trip.id) == offer)
    }

    @Test func aDeclineMovesToTheNextCandidateAtOnce() async throws {
        let sut = try makeSUT()
        await sut.online("p1", at: ProviderBackend.north(100))
        await sut.online("p2", at: ProviderBackend.north(200))
        var p1 = ProviderInbox(sut.providers, "p1"), p2 = ProviderInbox(sut.providers, "p2")
        let trip = try await sut.requestRide()
        let first = try await p1.offer()
        #expect(
            await sut.call("POST", "/v1/provider/offers/\(first.offerId)/decline", as: "p1", .provider).status == 204)
        let second = try await p2.offer()  // no clock advance: the decline moved dispatch on
        #expect(second.tripId == trip.id && second.offerId != first.offerId)
        let accepted = await sut.call("POST", "/v1/provider/offers/\(second.offerId)/accept", as: "p2", .provider)
        #expect(accepted.status == 200)
        let snapshot = try decodeTrip(accepted.body)
        #expect(snapshot.status == "driverAssigned" && snapshot.providerId == "p2")
        // The declined offer is over for p1: 409 with the real trip.
        let late = await sut.call("POST", "/v1/provider/offers/\(first.offerId)/accept", as: "p1", .provider)
        #expect(late.status == 409)
        #expect(try decodeConflict(late.body).trip.providerId == "p2")
    }

    @Test func anUnansweredOfferRunsOutAndTheNextCandidateIsAsked() async throws {
        let sut = try makeSUT()
        await sut.online("p1", at: ProviderBackend.north(100))
        await sut.online("p2", at: ProviderBackend.north(200))
        var p1 = ProviderInbox(sut.providers, "p1"), p2 = ProviderInbox(sut.providers, "p2")
        let trip = try await sut.requestRide()
        let first = try await p1.offer()
        await sut.clock.sleepers(atLeast: 1)
        await sut.clock.advance(by: .seconds(15))
        let withdrawn = try WireCoding.decoder().decode(
            OfferWithdrawn.self, from: Data(try await p1.next("offerWithdrawn").data))
        #expect(withdrawn == OfferWithdrawn(offerId: first.offerId, tripId: trip.id))
        let second = try await p2.offer()
        #expect(second.expiresAt == sut.clock.date.addingTimeInterval(15))
        // After expiresAt the accept is refused with the real state, still searching.
        let late = await sut.call("POST", "/v1/provider/offers/\(first.offerId)/accept", as: "p1", .provider)
        #expect(late.status == 409)
        let conflict = try decodeConflict(late.body)
        #expect(conflict.trip.status == "searching" && conflict.trip.id == trip.id)
        #expect(conflict.detail.contains("expired"))
        #expect(sut.metrics.counter("enroute_dispatch_offers_total", labels: ["ending": "expired"]) == 1)
    }

    @Test func afterNCandidatesTheRideEndsInNoDriversFound() async throws {
        let sut = try makeSUT { $0.maxCandidates = 3 }
        for i in 1...4 { await sut.online("p\(i)", at: ProviderBackend.north(Double(i) * 100)) }
        var inboxes = (1...4).map { ProviderInbox(sut.providers, "p\($0)") }
        let trip = try await sut.requestRide()
        for i in 0..<3 {
            _ = try await inboxes[i].offer()
            await sut.clock.sleepers(atLeast: 1)
            await sut.clock.advance(by: .seconds(15))
        }
        let ended = try await waitFor(sut, trip.id, status: "noDriversFound")
        #expect(ended.providerId == nil)
        #expect(sut.providers.dispatcher.liveOffer(heldBy: "p4") == nil, "the fourth provider is never asked")
        let log = try sut.backend.store.changes(tripId: trip.id)
        #expect(log.last?.actorRole == .backend && log.last?.status == "noDriversFound")
    }

    @Test func afterTSecondsWithoutSupplyTheRideEndsInNoDriversFound() async throws {
        let sut = try makeSUT()
        let trip = try await sut.requestRide()
        await sut.clock.sleepers(atLeast: 1)
        await sut.clock.advance(by: .seconds(119))
        #expect(try sut.trip(trip.id)?.status == .ride(.searching))
        await sut.clock.advance(by: .seconds(1))
        _ = try await waitFor(sut, trip.id, status: "noDriversFound")
    }

    @Test func aProviderComingOnlineDuringTheSearchGetsTheOfferAtOnce() async throws {
        let sut = try makeSUT()
        let trip = try await sut.requestRide()
        await sut.clock.sleepers(atLeast: 1)
        var p1 = ProviderInbox(sut.providers, "p1")
        await sut.online("p1", at: ProviderBackend.north(300))
        #expect(try await p1.offer().tripId == trip.id)
    }

    @Test func goingOfflineWithdrawsTheOfferAndMovesOn() async throws {
        let sut = try makeSUT()
        await sut.online("p1", at: ProviderBackend.north(100))
        await sut.online("p2", at: ProviderBackend.north(200))
        var p1 = ProviderInbox(sut.providers, "p1"), p2 = ProviderInbox(sut.providers, "p2")
        _ = try await sut.requestRide()
        let offer = try await p1.offer()
        await sut.offline("p1")
        #expect(
            try WireCoding.decoder().decode(OfferWithdrawn.self, from: Data(try await p1.next("offerWithdrawn").data))
                .offerId == offer.offerId)
        _ = try await p2.offer()
        #expect(
            await sut.call("POST", "/v1/provider/offers/\(offer.offerId)/accept", as: "p1", .provider).status == 409)
    }

    @Test func theCustomerCancellingWithdrawsTheOffer() async throws {
        let sut = try makeSUT()
        await sut.online("p1", at: ProviderBackend.north(100))
        var p1 = ProviderInbox(sut.providers, "p1")
        let trip = try await sut.requestRide()
        let offer = try await p1.offer()
        #expect(await sut.call("POST", "/v1/trips/\(trip.id)/cancel", as: "c1", .customer).status == 200)
        #expect(
            try WireCoding.decoder().decode(OfferWithdrawn.self, from: Data(try await p1.next("offerWithdrawn").data))
                .offerId == offer.offerId)
        let late = await sut.call("POST", "/v1/provider/offers/\(offer.offerId)/accept", as: "p1", .provider)
        #expect(late.status == 409)
        #expect(try decodeConflict(late.body).trip.status == "cancelled")
        // The search ends once the cancel reached it.
        try await eventually("every search has ended") { sut.providers.dispatcher.activeSearches == 0 }
    }

    @Test func anOfferIsOnlyItsHoldersToAccept() async throws {
        let sut = try makeSUT()
        await sut.online("p1", at: ProviderBackend.north(100))
        await sut.online("p2", at: ProviderBackend.north(200))
        var p1 = ProviderInbox(sut.providers, "p1")
        let trip = try await sut.requestRide()
        let offer = try await p1.offer()
        #expect(
            await sut.call("POST", "/v1/provider/offers/\(offer.offerId)/accept", as: "p2", .provider).status == 404)
        #expect(
            await sut.call("POST", "/v1/provider/offers/\(offer.offerId)/decline", as: "p2", .provider).status == 404)
        #expect(await sut.call("POST", "/v1/provider/offers/nope/accept", as: "p1", .provider).status == 404)
        // A direct accept by someone else while the offer is out finds nothing of theirs, and leaks nothing.
        let direct = await sut.call("POST", "/v1/provider/trips/\(trip.id)/accept", as: "p2", .provider)
        #expect(direct.status == 404)
        #expect(json(direct.body)["trip"] == nil)
        #expect(try sut.trip(trip.id)?.status == .ride(.searching))
        // The holder's direct accept takes the offer.
        #expect(await sut.call("POST", "/v1/provider/trips/\(trip.id)/accept", as: "p1", .provider).status == 200)
        #expect(try sut.trip(trip.id)?.providerId == "p1")
        // A retried accept of the accepted offer answers as the first did.
        #expect(
            await sut.call("POST", "/v1/provider/offers/\(offer.offerId)/accept", as: "p1", .provider).status == 200)
    }

    /// Exclusivity: the holder's accepts race 99 direct accepts from others; one provider ends up with the trip.
    @Test func oneHundredConcurrentAcceptsLeaveExactlyOneProviderHoldingTheTrip() async throws {
        let sut = try makeSUT()
        await sut.online("p0", at: ProviderBackend.north(10))
        for i in 1..<100 { await sut.online("p\(i)", at: ProviderBackend.north(Double(i) * 20 + 100)) }
        var p0 = ProviderInbox(sut.providers, "p0")
        let trip = try await sut.requestRide()
        let offer = try await p0.offer()
        let statuses = await withTaskGroup(of: (String, Int).self) { group in
            for i in 0..<100 {
                group.addTask {
                    if i % 2 == 0 {
                        return (
                            "p0",
                            await sut.call("POST", "/v1/provider/offers/\(offer.offerId)/accept", as: "p0", .provider)
                                .status
                        )
                    }
                    let provider = "p\(i)"
                    let path =
                        i % 4 == 1
                        ? "/v1/provider/trips/\(trip.id)/accept" : "/v1/provider/offers/\(offer.offerId)/accept"
                    return (provider, await sut.call("POST", path, as: provider, .provider).status)
                }
            }
            var out: [(String, Int)] = []
            for await result in group { out.append(result) }
            return out
        }
        let winners = Set(statuses.filter { $0.1 == 200 }.map(\.0))
        #expect(winners == ["p0"])
        #expect(statuses.allSatisfy { [200, 404, 409].contains($0.1) })
        let held = try #require(try sut.trip(trip.id))
        #expect(held.providerId == "p0" && held.status == .ride(.driverAssigned))
        let assignments = try sut.backend.store.changes(tripId: trip.id).filter { $0.status == "driverAssigned" }
        #expect(assignments.count == 1)
        #expect((1..<100).allSatisfy { sut.service.activeTrips(provider: "p\($0)").isEmpty })
    }

    /// Issue 18, defect 4: a provider who was never offered a trip cannot take it by id, online or not.
    @Test func oneHundredConcurrentDirectAcceptsWithoutOffersTakeNothing() async throws {
        let sut = try ProviderBackend(startDispatch: false)
        let trip = try await sut.requestRide()
        let statuses = await withTaskGroup(of: Int.self) { group in
            for i in 0..<100 {
                group.addTask {
                    await sut.call("POST", "/v1/provider/trips/\(trip.id)/accept", as: "p\(i)", .provider).status
                }
            }
            var out: [Int] = []
            for await status in group { out.append(status) }
            return out
        }
        #expect(statuses.allSatisfy { $0 == 404 })
        let unchanged = try #require(try sut.trip(trip.id))
        #expect(unchanged.providerId == nil && unchanged.status == .ride(.searching))
        #expect(try sut.backend.store.changes(tripId: trip.id).count == 1)
    }

    @Test func aProviderOnlineNearbyButNotOfferedCannotSnipeATripAroundDispatch() async throws {
        let sut = try makeSUT()
        await sut.online("p1", at: ProviderBackend.north(100))
        await sut.online("sniper", at: ProviderBackend.north(5_000))
        var p1 = ProviderInbox(sut.providers, "p1")
        let trip = try await sut.requestRide()
        _ = try await p1.offer()
        #expect(await sut.call("POST", "/v1/provider/trips/\(trip.id)/accept", as: "sniper", .provider).status == 404)
        #expect(try sut.trip(trip.id)?.providerId == nil)
    }

    @Test func opsCanAssignAWaitingTripAndTheOverrideIsLoggedAsOps() async throws {
        let sut = try makeSUT()
        await sut.online("p1", at: ProviderBackend.north(100))
        var p1 = ProviderInbox(sut.providers, "p1")
        let trip = try await sut.requestRide()
        let offer = try await p1.offer()
        // Only ops may override.
        #expect(
            await sut.call(
                "POST", "/v1/ops/trips/\(trip.id)/assign", as: "p2", .provider, json: #"{"providerId":"p2"}"#
            ).status == 403)
        #expect(
            await sut.call("POST", "/v1/ops/trips/\(trip.id)/assign", as: "ops1", .ops, json: #"{"providerId":" "}"#)
                .status == 422)
        let assigned = await sut.call(
            "POST", "/v1/ops/trips/\(trip.id)/assign", as: "ops1", .ops,
            json: #"{"providerId":"p2","reason":"customer asked for this driver"}"#)
        #expect(assigned.status == 200)
        #expect(try decodeTrip(assigned.body).providerId == "p2")
        let log = try sut.backend.store.changes(tripId: trip.id)
        #expect(log.last?.status == "driverAssigned" && log.last?.actorRole == .ops && log.last?.actorId == "ops1")
        // The offer that was out is over: its holder's accept is refused with the real trip.
        let late = await sut.call("POST", "/v1/provider/offers/\(offer.offerId)/accept", as: "p1", .provider)
        #expect(late.status == 409)
        #expect(try decodeConflict(late.body).trip.providerId == "p2")
    }

    @Test func aDriverGivingUpSendsTheRideBackToDispatchWithoutThem() async throws {
        let sut = try makeSUT()
        await sut.online("p1", at: ProviderBackend.north(100))
        await sut.online("p2", at: ProviderBackend.north(200))
        var p1 = ProviderInbox(sut.providers, "p1"), p2 = ProviderInbox(sut.providers, "p2")
        let trip = try await sut.requestRide()
        let offer = try await p1.offer()
        #expect(
            await sut.call("POST", "/v1/provider/offers/\(offer.offerId)/accept", as: "p1", .provider).status == 200)
        #expect(await sut.backend.step(trip.id, "cancelled", provider: "p1").status == 200)
        #expect(try await p2.offer().tripId == trip.id)
    }

    @Test func aDeliveryThatFindsNobodyStaysPlacedAndIsSearchedAgainLater() async throws {
        let sut = try makeSUT()
        let order = try await sut.backend.placeOrder()
        await sut.clock.sleepers(atLeast: 1)
        await sut.clock.advance(by: .seconds(120))
        // The retry wait is now the one sleeper; the order is untouched.
        await sut.clock.sleepers(atLeast: 1)
        #expect(try sut.trip(order.orderId)?.status == .delivery(.placed))
        #expect(sut.metrics.counter("enroute_dispatch_searches_total", labels: ["result": "retryLater"]) == 1)
        var courier = ProviderInbox(sut.providers, "r1")
        await sut.online("r1", at: Coordinate(lat: 60.1690, lng: 24.9320))
        await sut.clock.advance(by: .seconds(60))
        let offer = try await courier.offer()
        #expect(offer.tripId == order.orderId)
        let accepted = await sut.call("POST", "/v1/provider/offers/\(offer.offerId)/accept", as: "r1", .provider)
        #expect(accepted.status == 200)
        let snapshot = try decodeTrip(accepted.body)
        #expect(snapshot.status == "placed" && snapshot.providerId == "r1")
    }

    @Test func aProviderOnAnOfferIsNotOfferedASecondTrip() async throws {
        let sut = try makeSUT()
        await sut.online("p1", at: ProviderBackend.north(100))
        var p1 = ProviderInbox(sut.providers, "p1")
        let first = try await sut.requestRide("c1")
        #expect(try await p1.offer().tripId == first.id)
        let second = try await sut.requestRide("c2")
        await sut.clock.sleepers(atLeast: 2)
        #expect(sut.providers.dispatcher.liveOffer(forTrip: second.id) == nil)
        #expect(sut.providers.dispatcher.liveOffer(heldBy: "p1")?.tripId == first.id)
    }

    /// Provider locations whose next search for candidates waits, once armed, until the test lets it go on.
    final class HeldLocations: ProviderLocations {
        let base: ProviderPresence
        private struct Gate {
            var armed = false
            var holding: CheckedContinuation<Void, Never>?
            var watcher: CheckedContinuation<Void, Never>?
        }
        private let gate = Mutex(Gate())
        init(now: @escaping @Sendable () -> Date) { base = ProviderPresence(now: now) }

        /// The next `nearest` waits until `release()`.
        func holdNextSearch() { gate.withLock { $0.armed = true } }
        /// Returns once a search is being held.
        func searchHeld() async {
            await withCheckedContinuation { watcher in
                let now = gate.withLock { g -> Bool in
                    if g.holding != nil { return true }
                    g.watcher = watcher
                    return false
                }
                if now { watcher.resume() }
            }
        }
        func release() {
            gate.withLock { g in
                g.holding?.resume(); g.holding = nil
            }
        }

        var fixLifetime: TimeInterval { base.fixLifetime }
        func setOnline(_ provider: String, _ online: Bool, position: Coordinate?) async throws -> Bool {
            base.setOnline(provider, online, position: position)
        }
        func update(_ provider: String, to coordinate: Coordinate, recordedAt: Date) async throws -> Bool {
            base.update(provider, to: coordinate, recordedAt: recordedAt)
        }
        func position(of provider: String) async throws -> ProviderPresence.Position? { base.position(of: provider) }
        func isOnline(_ provider: String) async throws -> Bool { base.isOnline(provider) }
        func onlineProviders() async throws -> [(id: String, position: ProviderPresence.Position?)] {
            base.onlineProviders()
        }
        func nearest(
            to center: Coordinate, limit: Int, within radius: Double, where include: (String) -> Bool
        ) async throws -> [GeoHit<String>] {
            let hits = base.nearest(to: center, limit: limit, within: radius, where: include)
            await withCheckedContinuation { held in
                let go = gate.withLock { g -> Bool in
                    guard g.armed else { return true }
                    g.armed = false
                    g.holding = held
                    g.watcher?.resume()
                    g.watcher = nil
                    return false
                }
                if go { held.resume() }
            }
            return hits
        }
    }

    /// The search found its candidate while an operator assigned the trip: the candidate is not offered a trip that
    /// no longer needs them (under load this once reached a provider as a stray offer).
    @Test func aTripAssignedWhileItsSearchLooksIsOfferedToNobody() async throws {
        let clock = ManualClock()
        let locations = HeldLocations(now: { clock.date })
        let sut = try ProviderBackend(clock: clock, locations: locations)
        await sut.online("near", at: ProviderBackend.north(400))
        var near = ProviderInbox(sut.providers, "near")
        // Priced first, so that the hold catches the search's own look.
        let body = try await sut.backend.rideBody("c0")
        locations.holdNextSearch()
        let created = await sut.call(
            "POST", "/v1/trips", as: "c0", .customer, json: body, headers: ["Idempotency-Key": UUID().uuidString])
        #expect(created.status == 201)
        let assigned = try WireCoding.decoder().decode(Trip.self, from: Data(created.body))
        await locations.searchHeld()
        #expect(await sut.assign(assigned.id, to: "p0").status == 200)
        locations.release()
        await sut.providers.dispatcher.searchEnded(assigned.id)
        #expect(sut.providers.dispatcher.liveOffer(heldBy: "near") == nil)
        // The first offer that reaches the candidate is for the next ride.
        let next = try await sut.requestRide("c1")
        #expect(try await near.offer().tripId == next.id)
    }
}
