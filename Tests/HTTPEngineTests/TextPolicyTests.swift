import Testing
@testable import HTTPEngine

/// U+0000 never enters through a JSON body: a string (value or name) holding it is found and named, and nothing else
/// is.
@Suite struct TextPolicyTests {
    @Test(arguments: [
        (#"{"text":"hi\u0000there"}"#, "/text"),
        (#"{"items":[{"sku":"coffee"},{"sku":"tea\u0000"}]}"#, "/items/1/sku"),
        (#"{"a/b":{"c~d":"\u0000"}}"#, "/a~1b/c~0d"),
        (#"{"name\u0000":1}"#, #"/name\u0000"#),
        (#""\u0000""#, "/"),
        (#"["x","\u0000"]"#, "/1"),
    ])
    func aStringHoldingNULIsNamed(body: String, pointer: String) {
        #expect(TextPolicy.nulPointer(inJSON: Array(body.utf8)) == pointer)
    }

    @Test(arguments: [
        #"{"text":"hi there"}"#,
        #"{"text":"a backslash then u0000: \\u0000"}"#,
        #"{"text":"\u0001\u001f"}"#,
        #"{"text":"\u0000"#,  // not JSON: its decoding says so
    ])
    func nothingElseIsRefused(body: String) {
        #expect(TextPolicy.nulPointer(inJSON: Array(body.utf8)) == nil)
    }

    @Test(arguments: [
        (#"\u0000"#, true), (#"{"a":"\u0000"}"#, true), (#"\\u0000"#, true), (#"xx\u000"#, false),
        (#"\u0001"#, false), (#"\U0000"#, false), ("", false), (#"{"a":"u0000\"}"#, false),
    ])
    func theScanFindsTheEscapeWhereverItIs(body: String, found: Bool) {
        #expect(TextPolicy.mayHoldNUL(Array(body.utf8)) == found)
    }
}
