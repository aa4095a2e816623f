import Testing
@testable import HTTPEngine

/// The bytes of an answer's head, and the `Date` field's format.
@Suite struct ResponseHeadTests {
    let date = Array("Sun, 06 Nov 1994 08:49:37 GMT".utf8)

    func text(
        status: Int, headers: HTTPHeaders = HTTPHeaders(), length: ResponseHead.Length,
        persistence: ResponseHead.Persistence
    ) -> String {
        var out: [UInt8] = []
        ResponseHead.write(
            status: status, headers: headers, length: length, persistence: persistence, date: date, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func aHeadCarriesTheStatusFieldsLengthAndDate() {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json")
        #expect(
            text(status: 200, headers: headers, length: .known(1234), persistence: .implicit)
                == "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1234\r\nDate: Sun, 06 Nov "
                + "1994 08:49:37 GMT\r\n\r\n"
        )
    }

    @Test func persistenceAndChunkingAreSaidWhenTheyDifferFromTheDefault() {
        #expect(
            text(status: 404, length: .known(0), persistence: .close).contains(
                "Content-Length: 0\r\nConnection: close\r\n"))
        #expect(text(status: 200, length: .known(0), persistence: .keepAlive).contains("Connection: keep-alive\r\n"))
        #expect(text(status: 200, length: .chunked, persistence: .implicit).contains("Transfer-Encoding: chunked\r\n"))
        #expect(!text(status: 204, length: .none, persistence: .implicit).contains("Content-Length"))
    }

    @Test func aFieldCannotEndItsLineEarly() {
        var headers = HTTPHeaders()
        headers.add("X-Note", "a\r\nSet-Cookie: stolen")
        let head = text(status: 200, headers: headers, length: .known(0), persistence: .implicit)
        #expect(head.contains("X-Note: a  Set-Cookie: stolen\r\n"))
        #expect(!head.contains("\r\nSet-Cookie"))
    }

    @Test func statusLinesNameTheirReasonOrTheirClass() {
        #expect(String(decoding: ResponseHead.statusLine(413), as: UTF8.self) == "HTTP/1.1 413 Content Too Large\r\n")
        #expect(String(decoding: ResponseHead.statusLine(299), as: UTF8.self) == "HTTP/1.1 299 Success\r\n")
        #expect(String(decoding: ResponseHead.statusLine(799), as: UTF8.self) == "HTTP/1.1 799 Server Error\r\n")
        #expect(
            ResponseHead.hasBody(200) && !ResponseHead.hasBody(101) && !ResponseHead.hasBody(204)
                && !ResponseHead.hasBody(304))
    }

    @Test(
        arguments: [
            (Int64(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT"),
            (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
            (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
            (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
            (1_796_472_000, "Sat, 05 Dec 2026 12:00:00 GMT"),
        ] as [(Int64, String)])
    func datesAreIMFFixdates(seconds: Int64, text: String) {
        #expect(String(decoding: HTTPDate.format(secondsSince1970: seconds), as: UTF8.self) == text)
    }
}
