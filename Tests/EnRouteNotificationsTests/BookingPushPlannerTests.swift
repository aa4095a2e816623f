import Foundation
import Testing
import EnRouteModels
import EnRouteNotifications
import EnRouteDomain
import EnRouteAPNs
import TestSupport

@Suite struct BookingPushPlannerTests {
    /// 2026-10-21 08:30 UTC.
    static let booked = Date(timeIntervalSince1970: 1_792_571_400)
    static let searchStart = booked.addingTimeInterval(-20 * 60)

    /// A trip booked for `booked` (or asked for now, `scheduled: false`), not yet searching.
    static func trip(_ kind: TripKind, scheduled: Bool = true) -> TripRecord {
        var trip = TripRecord(
            id: "T1", kind: kind, status: kind == .ride ? .ride(.searching) : .delivery(.placed), customerId: "c1",
            pickup: Coordinate(lat: 39.29, lng: -76.61), dropoff: Coordinate(lat: 39.30, lng: -76.60),
            createdAt: booked.addingTimeInterval(-86_400))
        trip.scheduledFor = scheduled ? booked : nil
        trip.version = 2
        return trip
    }

    /// `trip` after one change made by `change`, with its version bumped.
    static func changed(_ trip: TripRecord, _ change: (inout TripRecord) -> Void) -> TripRecord {
        var next = trip
        change(&next)
        next.version += 1
        next.updatedAt = searchStart
        return next
    }

    static func searching(_ trip: TripRecord) -> TripRecord { changed(trip) { $0.matchingStartedAt = searchStart } }

    static func cancelled(_ trip: TripRecord, by party: Party, reason: String) -> TripRecord {
        changed(trip) {
            $0.status = trip.kind == .ride ? .ride(.cancelled) : .delivery(.cancelled)
            $0.cancellation = Cancellation(by: party, reason: reason)
        }
    }

    static let declined = TripLifecycle.declinedReason

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let old: TripRecord?
        let new: TripRecord
        let expected: BookingMoment?
        var testDescription: String { name }
    }

    static let cases: [Case] = {
        let ride = trip(.ride), delivery = trip(.delivery), now = trip(.ride, scheduled: false)
        let rideSearching = searching(ride)
        return [
            Case(name: "booked ride: search began", old: ride, new: rideSearching, expected: .searching),
            Case(name: "booked delivery: search began", old: delivery, new: searching(delivery), expected: .searching),
            Case(name: "trip asked for now: search began", old: now, new: searching(now), expected: nil),
            Case(
                name: "trip asked for now: nobody found", old: now,
                new: changed(now) { $0.status = .ride(.noDriversFound) }, expected: nil),
            Case(name: "booked trip created", old: nil, new: ride, expected: nil),
            Case(
                name: "version bump, matchingStartedAt unchanged", old: rideSearching,
                new: changed(rideSearching) { $0.etaLatest = booked }, expected: nil),
            Case(
                name: "booked ride: nobody found", old: rideSearching,
                new: changed(rideSearching) { $0.status = .ride(.noDriversFound) }, expected: .nobodyFound),
            Case(
                name: "booked ride: backend cancel, card declined", old: ride,
                new: cancelled(ride, by: .backend, reason: declined), expected: .declined),
            Case(
                name: "booked delivery: backend cancel, card declined", old: delivery,
                new: cancelled(delivery, by: .backend, reason: declined), expected: .declined),
            Case(
                name: "booked ride: customer cancel", old: ride,
                new: cancelled(ride, by: .customer, reason: "Plans changed"), expected: nil),
            Case(
                name: "booked ride: backend cancel for another reason", old: ride,
                new: cancelled(ride, by: .backend, reason: "Merchant closed"), expected: nil),
        ]
    }()

    @Test(arguments: cases) func planningPicksTheMoment(_ c: Case) {
        let reminder = BookingPushPlanner.reminder(from: c.old, to: c.new)
        #expect(reminder?.moment == c.expected)
        if let reminder {
            #expect(reminder.kind == c.new.kind)
            #expect(reminder.scheduledFor == Self.booked)
        }
    }

    @Test func bookedTimeIsShownOnTheTwentyFourHourClockOfTheZone() throws {
        #expect(BookingPushPlanner.clockTime(Self.booked, in: TimeZone(identifier: "UTC")!) == "08:30")
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        #expect(BookingPushPlanner.clockTime(Self.booked, in: newYork) == "04:30")
        #expect(BookingPushPlanner.clockTime(Self.booked.addingTimeInterval(6 * 3600), in: newYork) == "10:30")
    }

    static func job(_ moment: BookingMoment, _ kind: TripKind) -> PushJob {
        var job = PushJob(
            kind: .booking, orderId: "T1", accountId: "c1", orderVersion: 3, expiresAt: booked.addingTimeInterval(3600))
        job.notificationId = "booking.T1.3"
        job.booking = moment
        job.bookedKind = kind
        job.bookedTime = "08:30"
        return job
    }

    @Test(arguments: [
        (BookingMoment.searching, TripKind.ride, "Finding your driver", "For your 08:30 ride"),
        (.searching, .delivery, "Finding your courier", "For your 08:30 delivery"),
        (.nobodyFound, .ride, "No driver found", "No driver was free for your 08:30 ride. You have not been charged."),
        (
            .declined, .ride, "Booking cancelled",
            "Your card was declined when we began looking for your 08:30 ride. You have not been charged."
        ),
    ])
    func bookingPayloadIsAPlainAlertNamingTheBookedTime(
        moment: BookingMoment, kind: TripKind, title: String, body: String
    ) throws {
        let bytes = try PushPayloadBuilder().booking(Self.job(moment, kind))
        let root = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let aps = try #require(root["aps"] as? [String: Any])
        #expect((aps["alert"] as? [String: String]) == ["title": title, "body": body])
        #expect(aps["category"] as? String == "BOOKING")
        #expect(aps["thread-id"] as? String == "order-T1")
        #expect(aps["mutable-content"] == nil, "nothing for the service extension to open")
        #expect(root["notificationId"] as? String == "booking.T1.3")
        #expect(root["accountId"] as? String == "c1")
        #expect(root["tripId"] as? String == "T1")
        #expect(root["route"] as? String == (kind == .delivery ? "orders/T1" : "trips/T1"))
    }

    @Test func theObserverEnqueuesOneMessageThatTheSenderDeliversCollapsedPerTrip() async throws {
        let clock = ManualClock(start: Self.searchStart)
        let store = InMemoryTripStore()
        let devices = InMemoryDeviceRepository()
        let token = String(repeating: "cd", count: 32)
        try await devices.register(
            DeviceRecord(
                token: token, accountId: "c1", platform: "ios", environment: .production, appVersion: "4.2.0",
                publicKey: nil, registeredAt: clock.date))
        let old = Self.trip(.ride)
        let new = Self.searching(old)
        let planner = BookingPushPlanner()
        try await store.transaction { tx in
            try await planner.tripChanged(from: old, to: new, in: tx)
            try await planner.tripChanged(from: new, to: Self.changed(new) { $0.etaLatest = Self.booked }, in: tx)
        }
        let pending = try await store.dueOutbox(topic: PushJob.topic, now: .distantFuture, limit: 10)
        #expect(pending.map(\.id) == ["apns.booking.T1.3"])
        let job = try PushJob.decode(try #require(pending.first).payload)
        #expect(job.kind == .booking && job.booking == .searching && job.bookedTime == "08:30")

        let gateway = FakePushGateway(defaultOutcome: .delivered)
        let sender = PushSender(
            store: store, devices: devices, ledger: InMemoryNotificationLedger(), gateway: gateway, clock: clock,
            now: { clock.date })
        #expect(try await sender.drain() == 1)
        let push = try #require(gateway.sent.first)
        #expect(gateway.sent.count == 1)
        #expect(push.token == token && push.pushType == .alert && push.priority == 10)
        #expect(push.collapseID == PushPayloadBuilder.collapseID(bookingTripId: "T1"))
        #expect(push.collapseID == "booking-T1")
    }
}
