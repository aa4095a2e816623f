import Foundation
import Testing
import ClientKit
import EnRouteModels
import EnRouteDomain
import EnRouteSandbox
import TestSupport

/// The call button's model against the real server in-process: hidden until a provider accepts, the relay number
/// handed to the dialer on a tap, gone a stated time after the trip, and hidden at once when the server says so.
@MainActor @Suite struct TripCallModelTests {
    final class Dialer: @unchecked Sendable { var dialled: [String] = [] }

    func makeSUT() async throws -> (TestBackend, TripCallModel, Dialer, tripId: String) {
        let backend = TestBackend(telephony: LogTelephonyRelay(pool: [E164PhoneNumber("+3587000001")!], log: .discard))
        for (account, role, number) in [("c1", Party.customer, "+358401111111"), ("p1", .provider, "+358502222222")] {
            _ = await backend.call(
                "PUT", APIPath.accountPhone, token: backend.token(account, role), json: #"{"phoneNumber":"\#(number)"}"#
            )
        }
        let body = try await backend.rideBody(
            "c1", pickup: #"{"lat":60.1699,"lng":24.9384}"#, dropoff: #"{"lat":60.1715,"lng":24.9475}"#)
        let created = await backend.call(
            "POST", APIPath.trips, token: backend.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": UUID().uuidString])
        try #require(
            created.status == 201, "request ride: \(created.status) \(String(decoding: created.body, as: UTF8.self))")
        let trip = try WireCoding.decoder().decode(Trip.self, from: Data(created.body))
        let dialer = Dialer()
        let (http, server) = backend.client("c1", .customer)
        let model = TripCallModel(tripId: trip.id, client: http, server: server, dates: backend.clock.dates) {
            dialer.dialled.append($0)
        }
        return (backend, model, dialer, trip.id)
    }

    func snapshot(_ backend: TestBackend, _ id: String) throws -> TripSnapshot {
        backend.api.wire.snapshot(try #require(try backend.service.cached(id)))
    }

    @Test func theButtonShowsOnceAProviderAcceptsAndATapDialsTheRelayNumber() async throws {
        let (backend, model, dialer, id) = try await makeSUT()
        model.update(try snapshot(backend, id))
        #expect(model.state == .hidden, "nobody to call while searching")
        _ = await backend.assign(id, to: "p1")
        model.update(try snapshot(backend, id))
        #expect(model.state == .available)
        await model.call()
        #expect(model.state == .dialing("+3587000001"))
        #expect(dialer.dialled == ["+3587000001"])
    }

    @Test func theButtonGoesAStatedTimeAfterTheTripEnds() async throws {
        let (backend, model, _, id) = try await makeSUT()
        _ = await backend.assign(id, to: "p1")
        for step in ["driverArrived", "onTrip", "completed"] {
            _ = await backend.call(
                "POST", APIPath.providerTripSteps(id), token: backend.token("p1", .provider),
                json: #"{"changeId":"\#(step)","step":"\#(step)","deviceTime":"2026-10-20T18:40:00Z"}"#)
        }
        model.update(try snapshot(backend, id))
        #expect(model.state == .available, "calls stay open a while after the end")
        await backend.clock.advance(by: .seconds(14 * 60))
        model.refresh()
        #expect(model.state == .available)
        await backend.clock.advance(by: .seconds(61))
        model.refresh()
        #expect(model.state == .hidden)
    }

    @Test func aServerThatSaysCallsAreClosedHidesTheButtonForGood() async throws {
        let (backend, model, dialer, id) = try await makeSUT()
        _ = await backend.assign(id, to: "p1")
        model.update(try snapshot(backend, id))
        _ = await backend.call(
            "POST", APIPath.tripCancel(id), token: backend.token("c1", .customer),
            json: #"{"reason":"changed my mind"}"#)
        await backend.clock.advance(by: .seconds(16 * 60))
        // The screen has not heard of the end yet; the server has the last word.
        await model.call()
        #expect(model.state == .hidden)
        #expect(dialer.dialled.isEmpty)
        model.refresh()
        #expect(model.state == .hidden)
    }
}
