import Foundation
import Testing
import HTTPTransport
import CurlTransport
import Synchronization

/// HTTP2Session against the HTTP/2-only fixture (Fixtures/h2_fixture_server.py) over TLS with ALPN.
@Suite struct HTTP2SessionTests {
    /// The fixture's origin and certificate, started once per test process.
    struct Fixture {
        let origin: String
        let certificate: String

        /// A session to the fixture that trusts its certificate.
        func session(defaultTimeout: Duration = .seconds(30)) -> HTTP2Session {
            HTTP2Session(origin: origin, caFile: certificate, defaultTimeout: defaultTimeout)
        }

        private static let launched = Task { try await launch() }
        static func shared() async throws -> Fixture { try await launched.value }

        private static func launch() async throws -> Fixture {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "h2-fixture-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "Fixtures/h2_fixture_server.py")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script.path, "--dir", directory.path]
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            inputs.withLock { $0.append(input) }  // the server exits when this process ends and the pipe closes
            let reader = output.fileHandleForReading
            let line: String = await withCheckedContinuation { continuation in
                Thread.detachNewThread {  // the read blocks
                    var bytes: [UInt8] = []
                    while let byte = reader.readData(ofLength: 1).first, byte != 0x0A { bytes.append(byte) }
                    continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
                }
            }
            let parts = line.split(separator: " ")
            guard parts.count == 4, parts[0] == "PORT", let port = Int(parts[1]) else {
                throw FixtureError.noPort(line)
            }
            return Fixture(origin: "https://127.0.0.1:\(port)", certificate: String(parts[3]))
        }

        private static let inputs = Mutex<[Pipe]>([])
        enum FixtureError: Error { case noPort(String) }
    }

    static func echoed(_ response: HTTPClientResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
    }

    @Test func concurrentRequestsMultiplexOntoOneConnection() async throws {
        let fixture = try await Fixture.shared()
        let session = fixture.session(defaultTimeout: .seconds(10))
        // The fixture answers /together/8 only once all eight streams are open on one connection at once.
        let responses = try await withThrowingTaskGroup(of: HTTPClientResponse.self) { group in
            for _ in 0..<8 { group.addTask { try await session.send(HTTP2Session.Request(path: "/together/8")) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(responses.map(\.status) == Array(repeating: 200, count: 8))
        #expect(Set(responses.compactMap { $0.header("x-connection") }).count == 1)
        #expect(Set(responses.compactMap { $0.header("x-stream") }).count == 8)
        let later = try await session.send(HTTP2Session.Request(path: "/echo"))
        #expect(
            later.header("x-connection") == responses[0].header("x-connection"),
            "the connection stays open between requests")
        #expect(session.connectionsOpened == 1)
    }

    @Test func anErrorStatusIsAnAnswerWithItsHeadersAndBody() async throws {
        let fixture = try await Fixture.shared()
        let session = fixture.session()
        let response = try await session.send(
            HTTP2Session.Request(method: "POST", path: "/status/503", body: Data("{}".utf8)))
        #expect(response.status == 503)
        #expect(response.header("content-type") == "application/problem+json")
        #expect(response.header("x-reason") == "fixture")
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"title": "status 503"}"#)
    }

    @Test func headersAndBodyGoOutAsGivenAndAnEmptyValueRemovesCurlsOwn() async throws {
        let fixture = try await Fixture.shared()
        let session = fixture.session()
        let response = try await session.send(
            HTTP2Session.Request(
                method: "POST", path: "/echo",
                headers: [("authorization", "bearer t"), ("content-type", "application/json"), ("accept", "")],
                body: Data(#"{"aps":{}}"#.utf8)))
        let echo = try Self.echoed(response)
        let headers = Dictionary(
            (echo["headers"] as? [[String]] ?? []).map { ($0[0], $0[1]) }, uniquingKeysWith: { $1 })
        #expect(echo["method"] as? String == "POST")
        #expect(echo["body"] as? String == #"{"aps":{}}"#)
        #expect(headers["authorization"] == "bearer t")
        #expect(headers["content-type"] == "application/json")
        #expect(headers["accept"] == nil)
        #expect(headers["expect"] == nil)
    }

    @Test func resetOpensANewConnectionForTheNextRequest() async throws {
        let fixture = try await Fixture.shared()
        let session = fixture.session()
        let first = try await session.send(HTTP2Session.Request(path: "/echo"))
        session.reset()
        let second = try await session.send(HTTP2Session.Request(path: "/echo"))
        #expect(first.header("x-connection") != second.header("x-connection"))
        #expect(session.connectionsOpened == 2)
    }

    @Test func aRequestWithoutAnAnswerTimesOutAndTheConnectionServesTheNext() async throws {
        let fixture = try await Fixture.shared()
        let session = fixture.session(defaultTimeout: .seconds(10))
        _ = try await session.send(HTTP2Session.Request(path: "/echo"))
        await #expect(throws: HTTPClientError.timedOut) {
            try await session.send(HTTP2Session.Request(path: "/hold", timeout: .milliseconds(300)))
        }
        #expect(try await session.send(HTTP2Session.Request(path: "/echo")).status == 200)
        #expect(session.connectionsOpened == 1)
    }

    @Test func anUntrustedCertificateIsAConnectionErrorAndTheCAFileTrustsIt() async throws {
        let fixture = try await Fixture.shared()
        await #expect {
            try await HTTP2Session(origin: fixture.origin).send(
                HTTP2Session.Request(path: "/echo", timeout: .seconds(5)))
        } throws: { error in
            if case HTTPClientError.network = error { true } else { false }
        }
        let trusted = fixture.session()
        #expect(try await trusted.send(HTTP2Session.Request(path: "/echo")).status == 200)
    }

    @Test func aRefusedConnectionIsANetworkErrorNotAStatus() async throws {
        // Port 9 (discard) is closed on loopback here.
        let session = HTTP2Session(origin: "https://127.0.0.1:9")
        await #expect {
            try await session.send(HTTP2Session.Request(path: "/", timeout: .seconds(2)))
        } throws: { error in
            if case HTTPClientError.network = error { true } else { false }
        }
    }

    @Test func cancellingTheCallerResetsItsStreamAndKeepsTheConnection() async throws {
        let fixture = try await Fixture.shared()
        let session = fixture.session(defaultTimeout: .seconds(30))
        _ = try await session.send(HTTP2Session.Request(path: "/echo"))
        let call = Task { try await session.send(HTTP2Session.Request(path: "/hold")) }
        // /held answers on the same connection, so it counts the held stream once the request has reached the server.
        var held = "0"
        while held == "0" {
            held = String(decoding: try await session.send(HTTP2Session.Request(path: "/held")).body, as: UTF8.self)
        }
        #expect(held == "1")
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        let after = try await session.send(HTTP2Session.Request(path: "/held"))
        #expect(String(decoding: after.body, as: UTF8.self) == "0", "the held stream was reset, not left open")
        #expect(session.connectionsOpened == 1)
    }
}
