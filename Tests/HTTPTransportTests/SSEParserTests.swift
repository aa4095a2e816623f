import Foundation
import Testing
@testable import HTTPTransport

@Suite struct SSEParserTests {
    @Test func dispatchesOnBlankLineWithIdAndEventName() {
        var parser = SSEParser()
        let events = parser.feed(Array("retry: 2000\nid: 7\nevent: tripUpdated\ndata: {\"a\":1}\n\n".utf8))
        #expect(events == [ServerSentEvent(event: "tripUpdated", data: "{\"a\":1}", id: "7")])
        #expect(parser.retryMilliseconds == 2000)
    }

    @Test func joinsMultiLineDataAndHandlesCRLFSplitAcrossChunks() {
        var parser = SSEParser()
        var events = parser.feed(Array("data: one\r".utf8))
        events += parser.feed(Array("\ndata: two\r\n".utf8))
        events += parser.feed(Array("\r\n".utf8))
        #expect(events == [ServerSentEvent(data: "one\ntwo")])
    }

    @Test func ignoresCommentsAndUnknownFieldsAndEmptyData() {
        var parser = SSEParser()
        let events = parser.feed(Array(": heartbeat\n\nfoo: bar\n\nevent: x\n\ndata:\n\n".utf8))
        #expect(events == [ServerSentEvent(data: "")])
    }

    @Test func idPersistsAndEmptyIdResetsIt() {
        var parser = SSEParser()
        var events = parser.feed(Array("id: 5\ndata: a\n\ndata: b\n\nid\ndata: c\n\n".utf8))
        #expect(events.map(\.id) == ["5", "5", nil])
        events = parser.feed(Array("data: unfinished".utf8))
        #expect(events.isEmpty)
    }

    @Test func stripsALeadingByteOrderMark() {
        var parser = SSEParser()
        #expect(parser.feed([0xEF, 0xBB, 0xBF] + Array("data: x\n\n".utf8)) == [ServerSentEvent(data: "x")])
    }
}
