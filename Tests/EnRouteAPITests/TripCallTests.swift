import Foundation
import Testing
import EnRouteDomain
import EnRouteSandbox
import EnRouteModels
import EnRouteBackend
import TestSupport
import Synchronization

/// The platform's relayed number through the API: the number each party dials, who may ask, and a session whose
/// lifetime follows the trip's.
@Suite struct TripCallTests {
    static let customerNumber = "+358401111111"
    static let providerNumber = "+358502222222"
    static let pool = ["+3587000001", "+3587000002", "+3587000003"].map { E164PhoneNumber($0)! }

    /// A backend whose relay is a log sink over `pool`, with both parties' numbers given (unless told otherwise).
    static func makeSUT(
        relay: LogTelephonyRelay = LogTelephonyRelay(pool: pool, log: .discard),
        storage: BackendConfiguration.Storage = .memory,
        clock: ManualClock = ManualClock(), numbers: Bool = true
    ) async -> TestBackend {
        let backend = TestBackend(clock: clock, storage: storage, telephony: relay)
        if numbers {
            #expect(await backend.setPhone("c1", .customer, customerNumber) == 200)
            #expect(await backend.setPhone("p1", .provider, providerNumber) == 200)
        }
        return backend
    }

    @Test func eachPartyDialsTheirOwnProxyNumberAndTheTripKeepsOneSession() async throws {
        let relay = LogTelephonyRelay(pool: Self.pool, log: .discard)
        let backend = await Self.makeSUT(relay: relay)
        let trip = try await backend.requestRide()
        #expect(await backend.assign(trip.id, to: "p1").status == 200)
        let customer = try await backend.dial(trip.id, "c1", .customer)
        let provider = try await backend.dial(trip.id, "p1", .provider)
        #expect(customer.dial == Self.pool[0].e164 && provider.dial == Self.pool[0].e164)
        #expect(customer.availableUntil == nil, "no closing time while the trip runs")
        #expect(try await backend.dial(trip.id, "c1", .customer) == customer)
        #expect(relay.openSessionCount == 1)
    }

    /// A second trip of the same customer gets another pool number: a proxy number names one session per caller.
    @Test func aCustomersSecondTripDialsAnotherNumber() async throws {
        let backend = await Self.makeSUT()
        #expect(await backend.setPhone("p2", .provider, "+358503333333") == 200)
        let first = try await backend.requestRide()
        _ = await backend.assign(first.id, to: "p1")
        _ = try await backend.dial(first.id, "c1", .customer)
        _ = await backend.step(first.id, "driverArrived"); _ = await backend.step(first.id, "onTrip");
        _ = await backend.step(first.id, "completed")
        let second = try await backend.requestRide()
        _ = await backend.assign(second.id, to: "p2")
        let again = try await backend.dial(second.id, "c1", .customer)
        #expect(again.dial == Self.pool[1].e164)
    }

    @Test(arguments: [("c2", Party.customer), ("p2", .provider), ("ops", .ops), ("m1", .merchant)])
    func anyoneButTheTripsCustomerAndProviderIsAnsweredNotFound(_ account: String, _ role: Party) async throws {
        let backend = await Self.makeSUT()
        let trip = try await backend.requestRide()
        _ = await backend.assign(trip.id, to: "p1")
        let r = await backend.call("POST", APIPath.tripCall(trip.id), token: backend.token(account, role))
        #expect(r.status == 404)
        #expect(
            await backend.call("POST", APIPath.tripCall("T-nope"), token: backend.token("c1", .customer)).status == 404)
    }

    @Test func aCallBeforeAProviderAcceptsIsRefusedWithTheReason() async throws {
        let backend = await Self.makeSUT()
        let trip = try await backend.requestRide()
        let r = await backend.call("POST", APIPath.tripCall(trip.id), token: backend.token("c1", .customer))
        #expect(r.status == 409)
        #expect(json(r.body)["title"] as? String == "No provider yet")
        #expect(r.headers["Content-Type"] == "application/problem+json")
    }

    @Test func aPartyWithoutANumberIsToldToGiveOneAndTheOtherSideIsNamed() async throws {
        let backend = await Self.makeSUT(numbers: false)
        #expect(await backend.setPhone("p1", .provider, Self.providerNumber) == 200)
        let trip = try await backend.requestRide()
        _ = await backend.assign(trip.id, to: "p1")
        let mine = await backend.call("POST", APIPath.tripCall(trip.id), token: backend.token("c1", .customer))
        #expect(mine.status == 409 && (json(mine.body)["detail"] as? String ?? "").contains("PUT /v1/account/phone"))
        let theirs = await backend.call("POST", APIPath.tripCall(trip.id), token: backend.token("p1", .provider))
        #expect(
            theirs.status == 409
                && (json(theirs.body)["detail"] as? String ?? "").contains("The customer has no phone number"))
    }

    /// The session is opened once, kept through the trip, given its closing time when the trip ends, and closed at the
    /// relay a stated time (the policy's 15 minutes) after the end; from then on a call is refused with the reason.
    @Test func theRelaySessionsLifetimeFollowsTheTrip() async throws {
        let relay = LogTelephonyRelay(pool: Self.pool, log: .discard)
        let clock = ManualClock()
        let backend = await Self.makeSUT(relay: relay, clock: clock)
        let calls = backend.backend.calls
        let trip = try await backend.requestRide()
        _ = await backend.assign(trip.id, to: "p1")
        _ = try await backend.dial(trip.id, "c1", .customer)
        await clock.advance(by: .seconds(3600))
        await calls.closeDue()
        #expect(relay.openSessionCount == 1, "an hour-long trip keeps its session")
        for step in ["driverArrived", "onTrip", "completed"] {
            #expect(await backend.step(trip.id, step).status == 200)
        }
        let ended = clock.date
        await calls.closeDue()
        #expect(relay.openSessionCount == 1)
        await clock.advance(by: .seconds(14 * 60))
        await calls.closeDue()
        let late = try await backend.dial(trip.id, "p1", .provider)
        #expect(late.availableUntil == ended.addingTimeInterval(15 * 60))
        #expect(relay.openSessionCount == 1)
        await clock.advance(by: .seconds(61))
        await calls.closeDue()
        #expect(relay.openSessionCount == 0, "closed 15 minutes after the end")
        let refused = await backend.call("POST", APIPath.tripCall(trip.id), token: backend.token("c1", .customer))
        #expect(refused.status == 409 && json(refused.body)["title"] as? String == "Calls closed")
        #expect(relay.openSessionCount == 0, "a refused call opens nothing")
    }

    /// The running backend closes the session by itself: its closer sleeps on the injected clock, a trip's end wakes
    /// it,
    /// and it closes the session on its first sweep after the stated time.
    @Test func theRunningBackendClosesTheSessionOnItsClock() async throws {
        let relay = LogTelephonyRelay(pool: Self.pool, log: .discard)
        let clock = ManualClock()
        let backend = await Self.makeSUT(relay: relay, clock: clock)
        try await backend.backend.start()
        let trip = try await backend.requestRide()
        _ = await backend.assign(trip.id, to: "p1")
        _ = try await backend.dial(trip.id, "c1", .customer)
        // Every background task asleep on the clock: each step below waits for that again, so a sweep's store reads
        // finish before time moves on, however long the store takes.
        let resting = clock.sleeperCount
        for step in ["driverArrived", "onTrip", "completed"] { _ = await backend.step(trip.id, step) }
        let ended = clock.date
        try await eventually("the session is closed", advancing: clock, by: .seconds(10), steps: 200, sleepers: resting)
        { relay.openSessionCount == 0 }
        let closedAt = clock.date.timeIntervalSince(ended)
        #expect(
            closedAt >= 15 * 60 && closedAt <= 15 * 60 + 40,
            "closed within a sweep of the stated 15 minutes, \(closedAt) s after the end")
        await backend.backend.stop()
    }

    /// A provider who gives the trip up before pickup takes their mapping with them: the next provider gets a new
    /// session.
    @Test func anotherProviderGetsANewSessionAndTheOldOneCloses() async throws {
        let relay = LogTelephonyRelay(pool: Self.pool, log: .discard)
        let backend = await Self.makeSUT(relay: relay)
        #expect(await backend.setPhone("p2", .provider, "+358503333333") == 200)
        let trip = try await backend.requestRide()
        _ = await backend.assign(trip.id, to: "p1")
        _ = try await backend.dial(trip.id, "c1", .customer)
        #expect(await backend.step(trip.id, "cancelled").status == 200)
        await backend.backend.calls.closeDue()
        #expect(relay.openSessionCount == 0)
        #expect(
            await backend.call("POST", APIPath.tripCall(trip.id), token: backend.token("p1", .provider)).status == 404)
        _ = await backend.assign(trip.id, to: "p2")
        _ = try await backend.dial(trip.id, "p2", .provider)
        #expect(relay.openSessionCount == 1)
    }

    /// The session is stored: a restarted backend reuses it (same numbers, nothing new opened) and still closes it.
    @Test func aRestartReusesTheTripsStoredSession() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-calls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let storage = BackendConfiguration.Storage.sqlite(path: dir.appendingPathComponent("enroute.sqlite").path)
        let relay = LogTelephonyRelay(pool: Self.pool, log: .discard)
        let clock = ManualClock()
        let (tripId, first): (String, TripCall)
        do {
            let backend = await Self.makeSUT(relay: relay, storage: storage, clock: clock)
            let trip = try await backend.requestRide()
            _ = await backend.assign(trip.id, to: "p1")
            tripId = trip.id
            first = try await backend.dial(trip.id, "c1", .customer)
        }
        let reopened = TestBackend(clock: clock, storage: storage, telephony: relay)
        #expect(try await reopened.dial(tripId, "c1", .customer) == first)
        #expect(relay.openSessionCount == 1)
        #expect(
            await reopened.call("GET", APIPath.accountPhone, token: reopened.token("p1", .provider)).status == 200,
            "numbers are kept too")
    }

    @Test(arguments: [
        "0401234567", "+0401234567", "+1234567", "+1234567890123456", "+358 40 123 4567", "+35840abc4567", "",
    ])
    func aPhoneNumberThatIsNotE164IsRefusedNamingTheField(_ text: String) async throws {
        let backend = TestBackend()
        let r = await backend.call(
            "PUT", APIPath.accountPhone, token: backend.token("c1", .customer), json: #"{"phoneNumber":"\#(text)"}"#)
        #expect(r.status == 422)
        let errors = json(r.body)["errors"] as? [[String: Any]]
        #expect(errors?.first?["pointer"] as? String == "/phoneNumber")
        #expect(await backend.call("GET", APIPath.accountPhone, token: backend.token("c1", .customer)).status == 404)
    }

    @Test func aPartyReadsBackOnlyTheirOwnNumber() async throws {
        let backend = await Self.makeSUT()
        let mine = await backend.call("GET", APIPath.accountPhone, token: backend.token("c1", .customer))
        #expect(json(mine.body)["phoneNumber"] as? String == Self.customerNumber)
        #expect(
            await backend.call("GET", APIPath.accountPhone, token: backend.token("p1", .customer)).status == 404,
            "roles keep apart")
        #expect(
            await backend.call(
                "PUT", APIPath.accountPhone, token: backend.token("ops", .ops),
                json: #"{"phoneNumber":"+358401111111"}"#
            ).status == 403)
    }
}
