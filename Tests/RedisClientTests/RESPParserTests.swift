import Testing
import RedisClient

/// The RESP2 reader on bytes alone, no server: every reply type, frames cut anywhere, malformed input.
@Suite struct RESPParserTests {
    private func parseAll(_ text: String) throws -> [RESPValue] {
        var parser = RESPParser()
        parser.append(Array(text.utf8))
        var values: [RESPValue] = []
        while let value = try parser.next() { values.append(value) }
        return values
    }

    @Test func everyReplyTypeIsRead() throws {
        let values = try parseAll("+OK\r\n-ERR wrong\r\n:-42\r\n$5\r\nhello\r\n$0\r\n\r\n$-1\r\n*-1\r\n*0\r\n")
        #expect(
            values == [
                .simple("OK"), .error("ERR wrong"), .integer(-42), .bulk(Array("hello".utf8)), .bulk([]), .null, .null,
                .array([]),
            ])
    }

    @Test func nestedArraysKeepTheirShape() throws {
        // An XREAD reply: [[stream, [[id, [field, value]]]]], with a null among the elements.
        let text = "*2\r\n*2\r\n$4\r\ncity\r\n*1\r\n*2\r\n$3\r\n7-0\r\n*2\r\n$1\r\nv\r\n$1\r\n3\r\n$-1\r\n"
        let values = try parseAll(text)
        let entry: RESPValue = .array([
            .bulk(Array("7-0".utf8)), .array([.bulk(Array("v".utf8)), .bulk(Array("3".utf8))]),
        ])
        #expect(values == [.array([.array([.bulk(Array("city".utf8)), .array([entry])]), .null])])
    }

    /// A frame cut at every byte, CR and LF included, gives nothing until its last byte, then exactly the reply.
    @Test func aFrameFedOneByteAtATimeComesOutWhole() throws {
        let text = "*3\r\n:1\r\n$6\r\nab\r\ncd\r\n*2\r\n+x\r\n-E y\r\n"
        let bytes = Array(text.utf8)
        var parser = RESPParser()
        for (index, byte) in bytes.enumerated() {
            parser.append([byte])
            let value = try parser.next()
            if index < bytes.count - 1 {
                #expect(value == nil, "a reply after \(index + 1) of \(bytes.count) bytes")
            } else {
                #expect(
                    value
                        == .array([.integer(1), .bulk(Array("ab\r\ncd".utf8)), .array([.simple("x"), .error("E y")])]))
            }
        }
        #expect(try parser.next() == nil)
        #expect(parser.bufferedCount == 0)
    }

    @Test func repliesAreHandedOutInOrderAcrossChunks() throws {
        var parser = RESPParser()
        parser.append(Array("+one\r\n:2\r\n$3\r\nth".utf8))
        #expect(try parser.next() == .simple("one"))
        #expect(try parser.next() == .integer(2))
        #expect(try parser.next() == nil)
        parser.append(Array("r\r\n".utf8))
        #expect(try parser.next() == .bulk(Array("thr".utf8)))
    }

    @Test func aBigBinaryBulkStringArrivesInChunks() throws {
        let payload = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let frame = Array("$\(payload.count)\r\n".utf8) + payload + [13, 10]
        var parser = RESPParser()
        var offset = 0
        var value: RESPValue?
        while offset < frame.count {
            #expect(value == nil)
            let end = min(frame.count, offset + 65_536)
            parser.append(frame[offset..<end])
            offset = end
            value = try parser.next()
        }
        #expect(value == .bulk(payload))
    }

    @Test(arguments: [
        "?what\r\n",  // unknown type byte
        ":12a\r\n",  // not an integer
        "$3\r\nabcd\r\n",  // bulk longer than its length
        "$-2\r\n",  // negative bulk length
        "*-5\r\n",  // negative array length
        "+O\rK\r\n",  // a CR inside a line
        "$999999999999\r\n",  // past the bulk limit
    ])
    func malformedBytesAreAProtocolViolation(text: String) {
        var parser = RESPParser()
        parser.append(Array(text.utf8))
        #expect {
            _ = try parser.next()
        } throws: { error in
            guard case RedisClientError.protocolViolation = error else { return false }
            return true
        }
    }

    @Test func arraysNestedPastTheLimitAreRefused() {
        var parser = RESPParser()
        parser.append(Array(String(repeating: "*1\r\n", count: RESPParser.maxDepth + 1).utf8) + Array(":1\r\n".utf8))
        #expect(throws: RedisClientError.self) { _ = try parser.next() }
    }

    @Test func aCommandIsFramedAsAnArrayOfBulkStrings() {
        let command = RedisCommand([Array("SET".utf8), Array("k".utf8), [0, 13, 10, 255]])
        #expect(command.encoded == Array("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\n".utf8) + [0, 13, 10, 255] + [13, 10])
        #expect((["PING"] as RedisCommand).encoded == Array("*1\r\n$4\r\nPING\r\n".utf8))
    }
}
