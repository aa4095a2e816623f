import Foundation
import Testing
import EnRouteModels
@testable import RideHailing

/// The WebSocket channel (Apple only) shares this frame decoding, so it is tested here on every platform.
@Suite struct TripEventEnvelopeTests {
    @Test func readsBothEventTypesAndSkipsUnknownOnes() throws {
        let trip = Fixtures.trip(.driverAssigned, version: 3)
        let tripFrame = try WireCoding.encoder().encode(LiveEnvelope(type: "tripUpdated", id: "7", data: trip))
        let location = Fixtures.location(seq: 4)
        let moveFrame = try WireCoding.encoder().encode(LiveEnvelope(type: "driverMoved", id: "8", data: location))

        #expect(try TripEvent.decode(envelope: tripFrame) == .tripUpdated(trip))
        #expect(try TripEvent.decode(envelope: moveFrame) == .driverMoved(location))
        #expect(try TripEvent.decode(envelope: Data(#"{"type":"surge","id":"9","data":{}}"#.utf8)) == nil)
    }
}
