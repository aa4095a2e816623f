import Foundation
import Testing
import EnRouteDomain
import EnRouteModels
import EnRouteTwilio
import TestSupport

/// `TwilioProxyRelay` against the Twilio Proxy stand-in: the requests Twilio documents, and the whole call flow on it.
@Suite struct TwilioProxyRelayTests {
    static func makeSUT(_ standIn: TwilioProxyStandIn, token: String? = nil) -> TwilioProxyRelay {
        TwilioProxyRelay(
            configuration: TwilioProxyConfiguration(
                username: standIn.accountSid, password: token ?? standIn.authToken,
                serviceSid: standIn.serviceSid, baseURL: URL(string: "https://proxy.twilio.test")!),
            client: InProcessHTTPClient(router: standIn.router()))
    }

    @Test func aSessionIsOpenedWithItsTtlGivenTwoParticipantsAndClosed() async throws {
        let standIn = TwilioProxyStandIn()
        let relay = Self.makeSUT(standIn)
        let session = try await relay.openSession(tripId: "T1", ttlSeconds: 21600)
        let a = try await relay.addParticipant(
            session: session, number: E164PhoneNumber("+358401111111")!, label: "customer")
        let b = try await relay.addParticipant(
            session: session, number: E164PhoneNumber("+358502222222")!, label: "provider")
        #expect(a.e164 == "+15005550001" && b.e164 == "+15005550001")
        try await relay.closeSession(session)
        #expect(standIn.sessions.map(\.status) == ["closed"])
        let requests = standIn.requests
        #expect(
            requests.map(\.path) == [
                "/v1/Services/\(standIn.serviceSid)/Sessions",
                "/v1/Services/\(standIn.serviceSid)/Sessions/\(session)/Participants",
                "/v1/Services/\(standIn.serviceSid)/Sessions/\(session)/Participants",
                "/v1/Services/\(standIn.serviceSid)/Sessions/\(session)",
            ])
        #expect(requests.allSatisfy { $0.method == "POST" && $0.contentType == "application/x-www-form-urlencoded" })
        #expect(requests[0].form == ["Ttl": "21600", "Mode": "voice-only"])
        #expect(
            requests[1].form == ["Identifier": "+358401111111", "FriendlyName": "customer"],
            "the + is sent encoded, not as a space")
        #expect(requests[3].form == ["Status": "closed"])
    }

    @Test func refusedCredentialsAreARelayErrorWithTwiliosCode() async throws {
        let standIn = TwilioProxyStandIn()
        await #expect(throws: TelephonyRelayError.relay(status: 401, detail: "Twilio error 20003")) {
            _ = try await Self.makeSUT(standIn, token: "wrong").openSession(tripId: "T1", ttlSeconds: 60)
        }
    }

    /// Twilio's error message may quote the participant's number; the relay keeps only the code, so logs never see it.
    @Test func aRelayErrorNeverCarriesTheRealNumber() async throws {
        let standIn = TwilioProxyStandIn()
        let relay = Self.makeSUT(standIn)
        let number = E164PhoneNumber("+358401111111")!
        for trip in ["T1", "T2"] {
            let s = try await relay.openSession(tripId: trip, ttlSeconds: 60)
            _ = try await relay.addParticipant(session: s, number: number, label: "customer")
        }
        let third = try await relay.openSession(tripId: "T3", ttlSeconds: 60)
        do {
            _ = try await relay.addParticipant(session: third, number: number, label: "customer")
            Issue.record("the pool of two should be exhausted for this number")
        } catch {
            #expect(!"\(error)".contains("358401111111"))
            #expect(error as? TelephonyRelayError == .relay(status: 400, detail: "Twilio error 80207"))
        }
    }

    @Test func anUnknownSessionIsReportedAsSuch() async throws {
        let relay = Self.makeSUT(TwilioProxyStandIn())
        await #expect(throws: TelephonyRelayError.unknownSession("KC404")) { try await relay.closeSession("KC404") }
    }

    /// The API over Twilio: the caller gets Twilio's proxy number, and the session closes at Twilio after the trip.
    @Test func theCallFlowRunsOnTwilioAndTheSessionClosesThereAfterTheTrip() async throws {
        let standIn = TwilioProxyStandIn()
        let clock = ManualClock()
        let backend = TestBackend(clock: clock, telephony: Self.makeSUT(standIn))
        #expect(await backend.setPhone("c1", .customer, "+358401111111") == 200)
        #expect(await backend.setPhone("p1", .provider, "+358502222222") == 200)
        let trip = try await backend.requestRide()
        _ = await backend.assign(trip.id, to: "p1")
        #expect(try await backend.dial(trip.id, "c1", .customer).dial == "+15005550001")
        for step in ["driverArrived", "onTrip", "completed"] { _ = await backend.step(trip.id, step) }
        await clock.advance(by: .seconds(15 * 60))
        await backend.backend.calls.closeDue()
        #expect(standIn.sessions.map(\.status) == ["closed"])
        #expect(standIn.sessions.first?.ttl == 21600)
    }
}
