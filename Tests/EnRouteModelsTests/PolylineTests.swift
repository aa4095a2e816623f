import Testing
import EnRouteModels

/// The encoded polyline format against the published example and round trips at both precisions.
@Suite struct PolylineTests {
    /// The format's own documented example (precision 5).
    static let example = [
        Coordinate(lat: 38.5, lng: -120.2), Coordinate(lat: 40.7, lng: -120.95), Coordinate(lat: 43.252, lng: -126.453),
    ]

    @Test func thePublishedExampleEncodesAndDecodesAtPrecisionFive() throws {
        #expect(Polyline.encode(Self.example, precision: 5) == "_p~iF~ps|U_ulLnnqC_mqNvxq`@")
        #expect(try Polyline.decode("_p~iF~ps|U_ulLnnqC_mqNvxq`@", precision: 5) == Self.example)
    }

    @Test func precisionSixKeepsMicrodegreesThroughARoundTrip() throws {
        let path = [
            Coordinate(lat: 60.169_857, lng: 24.938_379), Coordinate(lat: 60.170_001, lng: 24.937_5),
            Coordinate(lat: -33.868_82, lng: 151.209_296), Coordinate(lat: 0, lng: 0),
            Coordinate(lat: -0.000_001, lng: 179.999_999),
        ]
        let decoded = try Polyline.decode(Polyline.encode(path))
        #expect(decoded.count == path.count)
        for (a, b) in zip(decoded, path) {
            #expect(abs(a.lat - b.lat) < 5e-7 && abs(a.lng - b.lng) < 5e-7, "\(a) vs \(b)")
        }
        #expect(Polyline.encode([]) == "")
        #expect(try Polyline.decode("") == [])
    }

    @Test(arguments: [
        ("_p~iF", "a latitude without its longitude"),
        ("_p~i", "the string ends inside a number"),
        ("_p iF~ps|U", "character outside ? to ~"),
    ])
    func aMalformedPolylineIsAnErrorNamingWhere(text: String, reason: String) {
        #expect(throws: Polyline.DecodeError.self) { try Polyline.decode(text, precision: 5) }
        do { _ = try Polyline.decode(text, precision: 5) } catch { #expect(error.reason == reason) }
    }

    /// Numbers and sums past 32 bits are refused: the first input overflowed the running latitude (a trap), the second
    /// (found by the Polyline fuzz target) decoded to values too large to encode back to the same string.
    @Test(arguments: [
        (String(repeating: "~~~~~~~~~~~^", count: 40), "a number longer than 32 bits"),
        ("_p~iF~n_mqNvn_mxpn_mqNvxq`@", "a number longer than 32 bits"),
        (String(repeating: "}~~~~~B?", count: 2), "a coordinate past 32 bits"),
    ])
    func numbersPast32BitsAreRefused(text: String, reason: String) {
        #expect(throws: Polyline.DecodeError.self) { try Polyline.decode(text) }
        do { _ = try Polyline.decode(text) } catch { #expect(error.reason == reason) }
    }
}
