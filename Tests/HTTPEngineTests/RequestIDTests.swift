import Foundation
import Testing
@testable import HTTPEngine

/// Every request has an id: the client's when it is a plain token, the server's otherwise.
@Suite struct RequestIDTests {
    @Test func aPlainTokenFromTheClientIsKeptAndAnythingElseReplaced() {
        let ids = RequestIDs.counting(prefix: "s")
        #expect(ids.id(given: "0f3c-trace.7") == "0f3c-trace.7")
        #expect(ids.id(given: nil) == "s-1")
        #expect(ids.id(given: "") == "s-2")
        #expect(ids.id(given: "has space") == "s-3")
        #expect(ids.id(given: "quote\"d") == "s-4")
        #expect(ids.id(given: "tab\tbed") == "s-5")
        #expect(ids.id(given: "ünïcode") == "s-6")
        #expect(ids.id(given: String(repeating: "a", count: 129)) == "s-7")
        #expect(ids.id(given: String(repeating: "a", count: 128)) == String(repeating: "a", count: 128))
    }
}
