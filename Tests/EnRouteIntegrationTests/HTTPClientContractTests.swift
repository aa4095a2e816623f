import Foundation
import Testing
import HTTPTransport
import CurlTransport

/// Both transports against a real loopback server: the same promises, the same tests.
@Suite struct HTTPClientContractTests {
    enum Transport: String, CaseIterable, Sendable {
        case curl, urlSession
        func make() -> any HTTPClient {
            switch self {
            case .curl: CurlHTTPClient()
            case .urlSession: URLSessionHTTPClient()
            }
        }
    }

    @Test(arguments: Transport.allCases)
    func getReturnsStatusHeadersAndBody(transport: Transport) async throws {
        let client = transport.make()
        let response = try await client.send(HTTPClientRequest(url: try await FixtureServer.url("json")))
        #expect(response.status == 200)
        #expect(response.header("x-fixture") == "yes")
        #expect(response.header("Content-Type") == "application/json")
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"hello":"world"}"#)
    }

    @Test(arguments: Transport.allCases, ["POST", "PUT"])
    func sendsMethodBodyAndHeaders(transport: Transport, method: String) async throws {
        let client = transport.make()
        let request = HTTPClientRequest(
            method: method, url: try await FixtureServer.url("echo"),
            headers: ["Content-Type": "application/json", "Authorization": "Bearer T"],
            body: Data(#"{"token":"0aff"}"#.utf8))
        let response = try await client.send(request)
        #expect(response.status == 201)
        let echo = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
        #expect(
            echo == [
                "method": method, "path": "/echo", "body": #"{"token":"0aff"}"#,
                "contentType": "application/json", "authorization": "Bearer T",
            ])
    }

    @Test(arguments: Transport.allCases)
    func aNonSuccessStatusIsAnAnswerNotAnError(transport: Transport) async throws {
        let client = transport.make()
        let response = try await client.send(HTTPClientRequest(url: try await FixtureServer.url("status/429")))
        #expect(response.status == 429)
        #expect(response.header("Retry-After") == "7")
        #expect(String(decoding: response.body, as: UTF8.self) == "status 429")
        #expect(response.apiError() == .retryAfter(.seconds(7), status: 429))
    }

    @Test(arguments: Transport.allCases)
    func timesOut(transport: Transport) async throws {
        let client = transport.make()
        let slow = try await FixtureServer.url("slow/4000/\(UUID().uuidString)")
        let started = ContinuousClock.now
        await #expect(throws: HTTPClientError.timedOut) {
            try await client.send(HTTPClientRequest(url: slow, timeout: .seconds(1)))
        }
        // The answer would take 4 s; giving up must not wait for it.
        #expect(ContinuousClock.now - started < .seconds(3.5))
    }

    @Test(arguments: Transport.allCases)
    func cancellingTheCallerAbortsTheRequest(transport: Transport) async throws {
        let client = transport.make()
        let id = UUID().uuidString
        // The answer would take 12 s: a return well before it shows the request was aborted, with room for a
        // loaded machine's slow start (the bound is a guard on wall time, not a synchronisation).
        let slow = try await FixtureServer.url("slow/12000/\(id)")
        let started = ContinuousClock.now
        let call = Task { try await client.send(HTTPClientRequest(url: slow)) }
        // The server answers /wait/started-<id> once the slow request has reached it.
        let reached = try await client.send(HTTPClientRequest(url: try await FixtureServer.url("wait/started-\(id)")))
        #expect(String(decoding: reached.body, as: UTF8.self) == "true")
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(ContinuousClock.now - started < .seconds(8))
    }

    @Test(arguments: Transport.allCases)
    func anAlreadyCancelledCallerSendsNothing(transport: Transport) async throws {
        let client = transport.make()
        let url = try await FixtureServer.url("json")
        let call = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.send(HTTPClientRequest(url: url))
        }
        await #expect(throws: CancellationError.self) { try await call.value }
    }

    /// Cancels racing completion must neither crash nor hang.
    @Test(arguments: Transport.allCases)
    func survivesCancelsRacingCompletion(transport: Transport) async throws {
        let client = transport.make()
        let url = try await FixtureServer.url("json")
        var random = SystemRandomNumberGenerator()
        for _ in 0..<60 {
            let yields = Int.random(in: 0..<40, using: &random)
            let call = Task { try await client.send(HTTPClientRequest(url: url)) }
            for _ in 0..<yields { await Task.yield() }
            call.cancel()
            switch await call.result {
            case .success(let response): #expect(response.status == 200)
            case .failure(let error): #expect(error is CancellationError)
            }
        }
    }

    @Test(arguments: Transport.allCases)
    func streamsServerSentEventsUntilTheServerEnds(transport: Transport) async throws {
        let client = transport.make()
        var received: [ServerSentEvent] = []
        for try await event in client.events(HTTPClientRequest(url: try await FixtureServer.url("events/3"))) {
            received.append(event)
        }
        #expect(received == (1...3).map { ServerSentEvent(event: "tick", data: "{\"n\": \($0)}", id: "\($0)") })
    }

    @Test(arguments: Transport.allCases)
    func aStreamAnsweredWithoutA200Throws(transport: Transport) async throws {
        let client = transport.make()
        await #expect(throws: HTTPClientError.unexpectedStatus(404, body: Data("nope".utf8))) {
            for try await _ in client.events(HTTPClientRequest(url: try await FixtureServer.url("missing"))) {}
        }
    }

    @Test(arguments: Transport.allCases)
    func stoppingIterationClosesTheConnection(transport: Transport) async throws {
        let client = transport.make()
        let id = UUID().uuidString
        var first: ServerSentEvent?
        for try await event in client.events(HTTPClientRequest(url: try await FixtureServer.url("hold/\(id)"))) {
            first = event
            break
        }
        #expect(first?.data == "first")
        // The server answers once its next keep-alive write hit a closed socket.
        let gone = try await client.send(HTTPClientRequest(url: try await FixtureServer.url("wait/gone-\(id)")))
        #expect(String(decoding: gone.body, as: UTF8.self) == "true")
    }
}
