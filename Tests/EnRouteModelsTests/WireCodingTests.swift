import Foundation
import Testing
@testable import EnRouteModels

@Suite struct WireCodingTests {
    @Test(arguments: [
        ("2026-10-20T18:42:00Z", 1_792_521_720.0),
        ("2026-10-20T18:42:00.250Z", 1_792_521_720.25),
        ("2026-10-20T20:42:00+02:00", 1_792_521_720.0),
        ("1970-01-01T00:00:00Z", 0.0),
        ("2000-02-29T12:00:00Z", 951_825_600.0),
    ])
    func parsesISO8601Times(text: String, seconds: Double) throws {
        let date = try #require(ISO8601.parse(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.0005)
    }

    @Test(arguments: [
        "", "2026-10-20", "2026-13-01T00:00:00Z", "2026-10-20T18:42:00", "2026-10-20T18:42:00Zjunk",
        "2026-10-20T25:00:00Z",
    ])
    func rejectsMalformedTimes(text: String) {
        #expect(ISO8601.parse(text) == nil)
    }

    @Test func formatsWholeSecondsWithoutFraction() {
        #expect(ISO8601.format(Date(timeIntervalSince1970: 1_792_521_720)) == "2026-10-20T18:42:00Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: 1_792_521_720.5)) == "2026-10-20T18:42:00.500Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: 1_792_521_720.007)) == "2026-10-20T18:42:00.007Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: 253_402_300_800)) == "10000-01-01T00:00:00Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: -62_135_596_800)) == "0001-01-01T00:00:00Z")
    }

    @Test func formatAndParseRoundTripOverManyDays() throws {
        var t = -86_400.0 * 365 * 30
        while t < 86_400.0 * 365 * 100 {
            let date = Date(timeIntervalSince1970: t)
            let back = try #require(ISO8601.parse(ISO8601.format(date)))
            #expect(back == date)
            t += 86_400 * 13 + 3_671.125
        }
    }

    /// The tracking JSON must read exactly as the order tracker expects it, explicit nulls included.
    @Test func trackingDTODecodesTheSeedExampleAndEncodesNulls() throws {
        let seed = """
            { "orderId": "8F3K", "version": 7, "status": "onTheWay",
              "problem": null,
              "eta": { "earliest": "2026-10-20T18:42:00Z", "latest": "2026-10-20T18:46:00Z" },
              "rider": { "firstName": "Ana", "lat": 52.52, "lng": 13.40,
                         "recordedAt": "2026-10-20T18:37:55Z" },
              "destination": { "lat": 52.53, "lng": 13.41 },
              "generatedAt": "2026-10-20T18:38:00Z" }
            """
        let dto = try WireCoding.decoder().decode(TrackingDTO.self, from: Data(seed.utf8))
        #expect(dto.orderId == "8F3K")
        #expect(dto.version == 7)
        #expect(dto.status == .onTheWay)
        #expect(dto.rider?.firstName == "Ana")
        #expect(dto.eta?.latest == ISO8601.parse("2026-10-20T18:46:00Z"))
        let again = try WireCoding.decoder().decode(TrackingDTO.self, from: WireCoding.encoder().encode(dto))
        #expect(again == dto)

        let bare = TrackingDTO(
            orderId: "A", version: 1, status: .placed, problem: nil, eta: nil, rider: nil,
            destination: Coordinate(lat: 1, lng: 2), generatedAt: Date(timeIntervalSince1970: 0))
        let json = String(decoding: try WireCoding.encoder().encode(bare), as: UTF8.self)
        #expect(json.contains("\"problem\":null"))
        #expect(json.contains("\"rider\":null"))
        #expect(json.contains("\"eta\":null"))
    }

    @Test func tripEventsRoundTripThroughNameAndPayload() throws {
        let trip = Trip(
            id: "t1", state: .driverAssigned, pickup: .init(lat: 1, lng: 2), dropoff: .init(lat: 3, lng: 4), version: 3)
        let moved = DriverLocation(
            coordinate: .init(lat: 1, lng: 2), heading: 90, timestamp: Date(timeIntervalSince1970: 10), seq: 4)
        for event in [TripEvent.tripUpdated(trip), .driverMoved(moved)] {
            #expect(try TripEvent.decode(name: event.name, payload: event.payload()) == event)
        }
        #expect(try TripEvent.decode(name: "unknown", payload: Data("{}".utf8)) == nil)
    }

    @Test func aDriverLocationCarriesItsETAAndOneWithoutStillDecodes() throws {
        let latest = Date(timeIntervalSince1970: 250)
        let moved = DriverLocation(
            coordinate: .init(lat: 1, lng: 2), heading: 90, timestamp: Date(timeIntervalSince1970: 10), seq: 4,
            etaSeconds: 240, etaLatest: latest)
        let json = String(decoding: try WireCoding.encoder().encode(moved), as: UTF8.self)
        #expect(json.contains("\"etaSeconds\":240"))
        #expect(try WireCoding.decoder().decode(DriverLocation.self, from: Data(json.utf8)) == moved)
        // A fixture or an older server without the ETA fields.
        let old = #"{"coordinate":{"lat":1,"lng":2},"heading":90,"timestamp":"1970-01-01T00:00:10Z","seq":4}"#
        let decoded = try WireCoding.decoder().decode(DriverLocation.self, from: Data(old.utf8))
        #expect(decoded.seq == 4)
        #expect(decoded.etaSeconds == nil && decoded.etaLatest == nil)
        let bare = String(decoding: try WireCoding.encoder().encode(decoded), as: UTF8.self)
        #expect(!bare.contains("eta"), "no ETA, no keys: \(bare)")
    }

    @Test(arguments: [
        (91.0, 0.0, false), (-90.0, 180.0, true), (0.0, -181.0, false), (Double.nan, 0.0, false), (52.5, 13.4, true),
    ])
    func coordinateValidity(lat: Double, lng: Double, valid: Bool) {
        #expect(Coordinate(lat: lat, lng: lng).isValid == valid)
    }
}

/// E.164 as the directory stores it: `+`, 8 to 15 digits, no leading 0; printed masked.
@Suite struct E164PhoneNumberTests {
    @Test(arguments: ["+35840123", "+358401234567", "+123456789012345"])
    func e164NumbersParse(_ text: String) { #expect(E164PhoneNumber(text)?.e164 == text) }

    @Test(arguments: [
        "358401234567", "+3584012", "+1234567890123456", "+0401234567", "+358 401234567", "+358-40-1234567",
        "++358401234567", "+３５８401234567",
    ])
    func anythingElseDoesNot(_ text: String) { #expect(E164PhoneNumber(text) == nil) }

    @Test func printingMasksAllButTheLastTwoDigits() {
        let number = E164PhoneNumber("+358401234567")!
        #expect("\(number)" == "+••••••••••67")
        #expect(!"\(number)".contains("3584012345"))
    }

    @Test func decodingRefusesANumberThatIsNotE164() throws {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([E164PhoneNumber].self, from: Data(#"["0401234567"]"#.utf8))
        }
        #expect(
            try JSONDecoder().decode([E164PhoneNumber].self, from: Data(#"["+358401234567"]"#.utf8)).first?.e164
                == "+358401234567")
    }
}
