import Foundation
import Testing
import EnRouteModels
@testable import EnRouteAPI
import TestSupport

/// The location batch's own reader gives what `JSONDecoder` gives for the shape the apps send, and leaves everything
/// else to `JSONDecoder` (nil), so an answer never depends on which of the two read the body.
@Suite struct LocationBatchJSONTests {
    static let fix =
        #"{"lat":60.1699,"lng":24.9384,"heading":90,"speed":8.5,"accuracy":5,"recordedAt":"#
        + #""2026-10-20T18:40:00Z"}"#

    @Test(arguments: [
        #"{"batchId":"b1","fixes":[\#(fix)]}"#,
        #"{"fixes":[\#(fix),\#(fix)],"batchId":"b-2"}"#,
        #"{"batchId":"b3","fixes":[]}"#,
        " { \"batchId\" : \"b4\" ,\n\t\"fixes\" : [ { \"recordedAt\" : \"2026-10-20T18:40:00.250Z\" ,"
            + " \"accuracy\" : 0 , \"speed\" : -0.0 , \"heading\" : 359.99 , \"lng\" : -1E2 ,"
            + " \"lat\" : -33.5e-1 } ] }\r\n",
        #"{"batchId":"é5","fixes":[{"lat":1e0,"lng":123456789012345678901234,"heading":0.1,"speed":9.99e299,"#
            + #""accuracy":5,"recordedAt":"2026-10-20T20:40:00+02:00"}]}"#,
    ])
    func theCommonShapeReadsAsTheDecoderReadsIt(body: String) throws {
        let fast = try #require(LocationBatchJSON.decode(Array(body.utf8)))
        let decoded = try WireCoding.decoder().decode(LocationBatch.self, from: Data(body.utf8))
        #expect(fast == decoded)
    }

    @Test(arguments: [
        "", "{}", "[]", #"{"batchId":"b1"}"#, #"{"fixes":[]}"#,
        #"{"batchId":"b\u0031","fixes":[]}"#,  // an escape: the decoder reads it
        #"{"batchId":"b1","fixes":[],"extra":1}"#,  // a member the shape does not name
        #"{"batchId":"b1","batchId":"b2","fixes":[]}"#,  // a member twice
        #"{"batchId":"b1","fixes":[{"lat":1,"lng":2,"heading":3,"speed":4,"recordedAt":"2026-10-20T18:40:00Z"}]}"#,
        #"{"batchId":"b1","fixes":[{"lat":01,"lng":2,"heading":3,"speed":4,"accuracy":5,"recordedAt":"x"}]}"#,
        #"{"batchId":"b1","fixes":[{"lat":1.,"lng":2,"heading":3,"speed":4,"accuracy":5,"recordedAt":"x"}]}"#,
        #"{"batchId":"b1","fixes":[{"lat":1,"lng":2,"heading":3,"speed":4,"accuracy":5,"recordedAt":"soon"}]}"#,
        #"{"batchId":"b1","fixes":[{"lat":1e999,"lng":2,"heading":3,"speed":4,"accuracy":5,"recordedAt":"x"}]}"#,
        #"{"batchId":"b1","fixes":[]} x"#, #"{"batchId":"b1","fixes":[],}"#, #"{"batchId":1,"fixes":[]}"#,
        // Numbers Foundation refuses or that come near the ends of Double: the decoder decides.
        #"{"batchId":"b1","fixes":[{"lat":0e2,"lng":2,"heading":3,"speed":4,"accuracy":5,"recordedAt":"x"}]}"#,
        #"{"batchId":"b1","fixes":[{"lat":6e-699,"lng":2,"heading":3,"speed":4,"accuracy":5,"recordedAt":"x"}]}"#,
    ])
    func anythingElseIsLeftToTheDecoder(body: String) {
        #expect(LocationBatchJSON.decode(Array(body.utf8)) == nil)
    }

    @Test func bytesThatAreNotUTF8AreLeftToTheDecoder() {
        #expect(LocationBatchJSON.decode(Array(#"{"batchId":"b"#.utf8) + [0xFF] + Array(#"","fixes":[]}"#.utf8)) == nil)
    }

    @Test func aBatchTheReaderLeavesIsStillTakenAsBefore() async throws {
        let backend = try ProviderBackend(startDispatch: false)
        #expect(await backend.online("p1", at: ProviderBackend.pickup) == 200)
        let at = ISO8601.format(backend.clock.date)
        let escaped =
            #"{"batchId":"b\u0031","fixes":[{"lat":60.1699,"lng":24.9384,"heading":0,"speed":1,"#
            + #""accuracy":5,"recordedAt":"\#(at)","note":"ignored"}]}"#
        let r = await backend.call("POST", "/v1/provider/locations", as: "p1", .provider, json: escaped)
        #expect(r.status == 200)
        #expect(String(decoding: r.body, as: UTF8.self).contains(#""batchId":"b1""#))
        let typed = await backend.call(
            "POST", "/v1/provider/locations", as: "p1", .provider, json: #"{"batchId":"b2","fixes":"many"}"#)
        #expect(typed.status == 422)
    }
}
