import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import TestSupport
import EnRouteBackend

/// Trips booked ahead (`scheduledFor`): the window they may be booked in, the quote bound to their time, the search
/// that begins shortly before they are due, and the money held only then.
@Suite(.timeLimit(.minutes(1))) struct BookedAheadTests {
    func book(
        _ sut: ProviderBackend, _ customer: String = "c1", at scheduledFor: Date?, quotedFor: Date?? = nil,
        card: String = "pm_card_visa"
    ) async throws -> (status: Int, body: [UInt8]) {
        try await sut.backend.book(customer, at: scheduledFor, quotedFor: quotedFor, card: card)
    }

    func booked(_ sut: ProviderBackend, _ customer: String = "c1", in seconds: TimeInterval) async throws -> Trip {
        try await sut.backend.bookRide(customer, in: seconds)
    }

    /// Advances the clock up to `step` at a time until `date`, each step once the search sleeps; stops early when
    /// `trip` stops waiting for a provider.
    func advance(
        _ sut: ProviderBackend, to date: Date, step: TimeInterval = 60, stoppingWhenDone trip: String? = nil
    ) async throws {
        let waiting = { try trip.map { try sut.trip($0)?.waitsForProvider == true } ?? true }
        while sut.clock.date < date {
            try await eventually("the search sleeps or ends") { try !waiting() || sut.clock.sleeperCount > 0 }
            guard try waiting() else { return }
            await sut.clock.advance(by: .seconds(min(step, max(1, date.timeIntervalSince(sut.clock.date)))))
        }
    }

    static let minute: TimeInterval = 60

    /// Minutes ahead, and the status the estimate is answered with.
    static let window: [(TimeInterval, Int)] = [
        (-1, 422), (14, 422), (15, 200), (7 * 24 * 60, 200), (7 * 24 * 60 + 1, 422),
    ]

    @Test(arguments: window)
    func aTimeOutsideFifteenMinutesToSevenDaysAheadIsRefusedNamingTheField(
        ahead: TimeInterval, status: Int
    )
        async throws
    {
        let sut = try ProviderBackend()
        let r = await sut.backend.estimates("c1", at: sut.clock.date.addingTimeInterval(ahead * Self.minute))
        #expect(r.status == status)
        if status == 422 { #expect(String(decoding: r.body, as: UTF8.self).contains("/scheduledFor")) }
    }

    @Test func aQuoteStaysBoundToTheTimeItWasPricedFor() async throws {
        let sut = try ProviderBackend()
        let later = sut.clock.date.addingTimeInterval(3600)
        let nowQuote = try await book(sut, at: later, quotedFor: .some(nil))
        #expect(nowQuote.status == 422)
        #expect(String(decoding: nowQuote.body, as: UTF8.self).contains("/scheduledFor"))
        let otherTime = try await book(sut, at: later, quotedFor: later.addingTimeInterval(600))
        #expect(otherTime.status == 422)
        let bookedQuoteNow = try await book(sut, at: nil, quotedFor: later)
        #expect(bookedQuoteNow.status == 422)
    }

    @Test func aBookedRideHoldsNoMoneyAndMakesNoOfferUntilItsSearchBegins() async throws {
        let sut = try ProviderBackend()
        var p1 = ProviderInbox(sut.providers, "p1")
        await sut.online("p1", at: ProviderBackend.north(250))
        let due = sut.clock.date.addingTimeInterval(20 * Self.minute)
        let trip = try await booked(sut, in: 20 * Self.minute)
        #expect(trip.state == .searching)
        #expect(trip.scheduledFor == due)
        #expect(trip.matchingStartedAt == nil)
        #expect(try sut.trip(trip.id)?.payment == nil)
        // p1 is 250 m away (30 s at 30 km/h): the search begins 3 minutes and 30 s before it is due.
        let start = due.addingTimeInterval(-(250 / StraightLineRanking.metresPerSecond) - 180)
        try await advance(sut, to: start.addingTimeInterval(-5))
        #expect(sut.providers.dispatcher.liveOffer(forTrip: trip.id) == nil)
        #expect(try sut.trip(trip.id)?.matchingStartedAt == nil)
        // Still there: a provider's position is kept only while their app keeps sending it.
        await sut.online("p1", at: ProviderBackend.north(250))
        try await advance(sut, to: start.addingTimeInterval(1))
        let offer = try await p1.offer()
        #expect(offer.tripId == trip.id)
        let started = try #require(try sut.trip(trip.id))
        #expect(abs((started.matchingStartedAt ?? .distantPast).timeIntervalSince(start)) < 2)
        #expect(started.payment?.state == .held)
    }

    @Test func aBookedRideDoesNotStopItsCustomerAskingForARideNow() async throws {
        let sut = try ProviderBackend()
        _ = try await booked(sut, in: 2 * 3600)
        _ = try await booked(sut, in: 3 * 3600)
        let now = try await book(sut, at: nil)
        #expect(now.status == 201)
        let again = try await book(sut, at: nil)
        #expect(again.status == 409)
    }

    @Test func aCardRefusedWhenTheSearchBeginsCancelsTheTripAndChargesNothing() async throws {
        let sut = try ProviderBackend()
        await sut.online("p1", at: ProviderBackend.north(250))
        let r = try await book(
            sut, at: sut.clock.date.addingTimeInterval(20 * Self.minute), card: "pm_card_visa_chargeDeclined")
        #expect(r.status == 201)
        let trip = try WireCoding.decoder().decode(Trip.self, from: Data(r.body))
        try await advance(sut, to: sut.clock.date.addingTimeInterval(20 * Self.minute), stoppingWhenDone: trip.id)
        await sut.providers.dispatcher.searchEnded(trip.id)
        let ended = try #require(try sut.trip(trip.id))
        #expect(ended.status == .ride(.cancelled))
        #expect(ended.cancellation?.reason == TripLifecycle.declinedReason)
        #expect(ended.payment == nil)
        #expect(sut.providers.dispatcher.liveOffer(forTrip: trip.id) == nil)
        #expect(try sut.service.store.ledger(tripId: trip.id).isEmpty)
    }

    @Test func aBookingWhoseQuoteIsGoneIsCancelledSayingSoAndChargesNothing() async throws {
        let sut = try ProviderBackend()
        let trip = try await booked(sut, in: 20 * Self.minute)
        try await #require(sut.service.payments).quotes.store.purge(expiredBefore: .distantFuture)
        try await advance(sut, to: sut.clock.date.addingTimeInterval(20 * Self.minute), stoppingWhenDone: trip.id)
        await sut.providers.dispatcher.searchEnded(trip.id)
        let ended = try #require(try sut.trip(trip.id))
        #expect(ended.status == .ride(.cancelled))
        #expect(ended.cancellation?.reason == TripLifecycle.quoteLostReason)
        #expect(ended.payment == nil)
        #expect(try sut.service.store.ledger(tripId: trip.id).isEmpty)
    }

    @Test func cancellingABookedRideBeforeItsSearchIsFreeAndEndsTheWait() async throws {
        let sut = try ProviderBackend()
        await sut.online("p1", at: ProviderBackend.north(250))
        let trip = try await booked(sut, in: 2 * 3600)
        let r = await sut.call(
            "POST", "/v1/trips/\(trip.id)/cancel", as: "c1", .customer, json: #"{"reason":"plans changed"}"#)
        #expect(r.status == 200)
        await sut.providers.dispatcher.searchEnded(trip.id)
        let ended = try #require(try sut.trip(trip.id))
        #expect(ended.status == .ride(.cancelled))
        #expect(ended.payment == nil)
        #expect(try sut.service.store.ledger(tripId: trip.id).isEmpty)
        #expect(sut.providers.dispatcher.activeSearches == 0)
    }

    @Test func aBookedRideNobodyTakesEndsWhenItIsDueWithNothingCharged() async throws {
        let sut = try ProviderBackend()
        let due = sut.clock.date.addingTimeInterval(20 * Self.minute)
        let trip = try await booked(sut, in: 20 * Self.minute)
        try await advance(sut, to: due.addingTimeInterval(-60))
        #expect(try sut.trip(trip.id)?.status == .ride(.searching))
        try await advance(sut, to: due)
        // The last round runs out on timers of a second each.
        try await advance(sut, to: due.addingTimeInterval(600), step: 1, stoppingWhenDone: trip.id)
        await sut.providers.dispatcher.searchEnded(trip.id)
        let ended = try #require(try sut.trip(trip.id))
        #expect(ended.status == .ride(.noDriversFound))
        try await sut.backend.settlePayments()
        #expect(try sut.trip(trip.id)?.payment?.state == .released)
    }

    @Test func aRestartDuringTheWaitLosesNoBookingAndBeginsItOnce() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "enroute-booked-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = BackendConfiguration.Storage.sqlite(path: folder.appendingPathComponent("db.sqlite").path)
        let clock = ManualClock()
        let trip: Trip
        do {
            let first = try ProviderBackend(storage: storage, clock: clock)
            trip = try await booked(first, in: 20 * Self.minute)
            first.providers.dispatcher.stop()
        }
        let second = try ProviderBackend(storage: storage, clock: clock)
        defer { second.providers.dispatcher.stop() }
        #expect(second.providers.dispatcher.activeSearches == 1, "the stored booking's wait is begun again")
        var p1 = ProviderInbox(second.providers, "p1")
        try await advance(second, to: clock.date.addingTimeInterval(15 * Self.minute))
        await second.online("p1", at: ProviderBackend.north(250))
        try await advance(second, to: clock.date.addingTimeInterval(3 * Self.minute))
        #expect(try await p1.offer().tripId == trip.id)
        let begun = try second.service.store.changes(tripId: trip.id).filter { $0.actorId == "dispatch" }
        #expect(begun.count == 1)
        #expect(try second.trip(trip.id)?.payment?.state == .held)
    }

    @Test func opsAssigningABookedRideBeforeItsSearchHoldsTheCardFirst() async throws {
        let sut = try ProviderBackend()
        await sut.online("p1", at: ProviderBackend.north(250))
        let trip = try await booked(sut, in: 2 * 3600)
        #expect(await sut.assign(trip.id, to: "p1").status == 200)
        let assigned = try #require(try sut.trip(trip.id))
        #expect(assigned.status == .ride(.driverAssigned))
        #expect(assigned.payment?.state == .held)
        #expect(assigned.matchingStartedAt != nil)
    }

    @Test func anOrderBookedAheadIsPlacedWithoutAHoldAndShownToItsMerchantWithItsTime() async throws {
        let sut = try ProviderBackend()
        let due = sut.clock.date.addingTimeInterval(3600)
        let when = ISO8601.format(due)
        await sut.backend.addCard("c1")
        let items = #"[{"sku":"coffee","quantity":2}]"#
        let basket = #""merchantId":"m1","items":\#(items),"destination":\#(TestBackend.dropoff)"#
        let quoted = await sut.call(
            "POST", "/v1/orders/quote", as: "c1", .customer, json: #"{\#(basket),"scheduledFor":"\#(when)"}"#)
        #expect(quoted.status == 200)
        let quote = try WireCoding.decoder().decode(OrderQuote.self, from: Data(quoted.body))
        let placed = await sut.call(
            "POST", "/v1/orders", as: "c1", .customer,
            json: #"{\#(basket),"quoteId":"\#(quote.quoteId)","scheduledFor":"\#(when)"}"#,
            headers: ["Idempotency-Key": UUID().uuidString])
        #expect(placed.status == 201)
        let order = try WireCoding.decoder().decode(TrackingDTO.self, from: Data(placed.body))
        #expect(try sut.trip(order.orderId)?.payment == nil)
        let list = await sut.call("GET", "/v1/merchant/orders", as: "m1", .merchant)
        let snapshots = try WireCoding.decoder().decode(TripSnapshotList.self, from: Data(list.body))
        #expect(snapshots.trips.first { $0.id == order.orderId }?.scheduledFor == due)
    }

    @Test func theOpsOverviewMarksABookingUntilItsSearchBegins() async throws {
        let sut = try ProviderBackend()
        let trip = try await booked(sut, in: 3600)
        let overview = json(await sut.call("GET", "/v1/ops/overview", as: "ops", .ops).body)
        let dots = try #require(overview["trips"] as? [[String: Any]])
        let dot = try #require(dots.first { $0["id"] as? String == trip.id })
        #expect(dot["bookedFor"] as? String == ISO8601.format(try #require(trip.scheduledFor)))
    }
}
