import Foundation
import Testing
import EnRouteModels
@testable import HTTPEngine

@Suite struct RouterTests {
    struct Body: Decodable { let name: String; let count: Int; let at: Date? }

    func makeSUT() -> Router {
        var router = Router()
        router.get("/v1/trips/{id}") { req in .text("trip \(try req.parameter("id"))") }
        router.get("/v1/trips/active") { _ in .text("active") }
        router.post("/v1/trips/{id}/cancel") { req in .text("cancel \(try req.parameter("id"))") }
        router.post("/echo", bodyLimit: 16) { req in
            let body = try req.decode(Body.self)
            return .text("\(body.name) \(body.count)")
        }
        router.add("GET", "/fast", .sync { _ in .text("fast") })
        router.get("/boom") { _ in throw NSError(domain: "secret internal detail", code: 7) }
        return router
    }

    func problem(_ response: HTTPResponse) throws -> Problem {
        #expect(response.headers["Content-Type"] == "application/problem+json")
        return try JSONDecoder().decode(Problem.self, from: Data(response.bodyBytes))
    }

    @Test func literalSegmentsWinOverParameters() async {
        let router = makeSUT()
        #expect(
            String(
                decoding: await router.respond(to: HTTPRequest(method: "GET", path: "/v1/trips/active")).bodyBytes,
                as: UTF8.self) == "active")
        #expect(
            String(
                decoding: await router.respond(to: HTTPRequest(method: "GET", path: "/v1/trips/t42")).bodyBytes,
                as: UTF8.self) == "trip t42")
    }

    @Test func unknownPathIs404ProblemJSON() async throws {
        let response = await makeSUT().respond(to: HTTPRequest(method: "GET", path: "/nope"))
        #expect(response.status == 404)
        #expect(try problem(response).status == 404)
    }

    @Test func wrongMethodIs405WithAllow() async throws {
        let response = await makeSUT().respond(to: HTTPRequest(method: "DELETE", path: "/v1/trips/t1"))
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET")
        #expect(try problem(response).title == "Method Not Allowed")
    }

    @Test func bodyOverTheRouteLimitIs413() async throws {
        let request = HTTPRequest(method: "POST", path: "/echo", body: Array(repeating: 0x20, count: 17))
        let response = await makeSUT().respond(to: request)
        #expect(response.status == 413)
        #expect(try problem(response).status == 413)
    }

    @Test(
        arguments: [
            ("{\"name\": ", 400, nil),
            ("[1,2]", 422, "/"),
            ("{\"count\": 1}", 422, "/name"),
            ("{\"name\": \"a\", \"count\": \"x\"}", 422, "/count"),
            ("{\"name\": \"a\", \"count\": 1, \"at\": \"nope\"}", 422, "/at"),
        ] as [(String, Int, String?)])
    func badBodiesAreNamedClearly(body: String, status: Int, pointer: String?) async throws {
        let request = HTTPRequest(
            method: "POST", path: "/echo", headers: HTTPHeaders([("Content-Type", "application/json")]),
            body: Array(body.utf8))
        var router = Router()
        router.post("/echo") { req in
            let body = try req.decode(Body.self)
            return .text(body.name)
        }
        let response = await router.respond(to: request)
        #expect(response.status == status)
        let p = try problem(response)
        if let pointer { #expect(p.errors?.first?.pointer == pointer) }
    }

    @Test func nonJSONContentTypeIs415() async {
        let request = HTTPRequest(
            method: "POST", path: "/echo", headers: HTTPHeaders([("Content-Type", "text/plain")]),
            body: Array("{}".utf8))
        #expect(await makeSUT().respond(to: request).status == 415)
    }

    @Test func unexpectedErrorsNeverLeakInternals() async throws {
        let response = await makeSUT().respond(to: HTTPRequest(method: "GET", path: "/boom"))
        #expect(response.status == 500)
        #expect(!String(decoding: response.bodyBytes, as: UTF8.self).contains("secret"))
    }

    @Test func syncHandlersAnswerThroughTheSameRouter() async {
        #expect(await makeSUT().respond(to: HTTPRequest(method: "GET", path: "/fast")).status == 200)
    }

    @Test func eventStreamWritesRetryThenEventsWithIds() async {
        let stream = EventStream { writer in
            try writer.send(event: "tripUpdated", id: "1", data: "{\"a\":1}")
            try writer.send(id: "2", data: "line1\nline2")
        }
        var text = ""
        for await chunk in stream.bytes(retryMilliseconds: 1500) { text += String(decoding: chunk, as: UTF8.self) }
        #expect(
            text == "retry: 1500\n\nid: 1\nevent: tripUpdated\ndata: {\"a\":1}\n\nid: 2\ndata: line1\ndata: line2\n\n")
    }
}

@Suite struct RouterExactPathTests {
    func makeSUT() -> Router {
        var router = Router()
        router.get("/") { _ in .text("root") }
        router.get("/v1/trips/{id}") { req in .text("trip \(try req.parameter("id"))") }
        return router
    }

    @Test(arguments: [
        "//v1//trips//t1", "/v1/trips/t1/", "/v1//trips/t1", "v1/trips/t1", "/v1/trips/t1\u{0}junk",
        "/v1/trips/t\u{7F}", "",
    ])
    func aPathThatIsNotExactlyARouteIs404(path: String) async {
        #expect(await makeSUT().respond(to: HTTPRequest(method: "GET", path: path)).status == 404)
    }

    @Test func exactPathsStillMatch() async {
        let router = makeSUT()
        #expect(
            String(
                decoding: await router.respond(to: HTTPRequest(method: "GET", path: "/v1/trips/t1")).bodyBytes,
                as: UTF8.self) == "trip t1")
        #expect(
            String(decoding: await router.respond(to: HTTPRequest(method: "GET", path: "/")).bodyBytes, as: UTF8.self)
                == "root")
    }

    /// Paths without parameters are looked up whole; they must resolve as the segment walk does.
    @Test func aPathWithoutParametersResolvesAsTheWalkDoes() async throws {
        var router = makeSUT()
        router.post("/v1/trips/search") { _ in .text("search") }
        router.get("/v1/trips/search") { _ in .text("listed") }
        let head = router.resolve(method: "HEAD", path: "/v1/trips/search")
        guard case .route(let route, let parameters) = head else {
            Issue.record("HEAD did not find GET: \(head)"); return
        }
        #expect(route.method == "GET" && parameters.isEmpty)
        guard case .methodNotAllowed(let allow) = router.resolve(method: "DELETE", path: "/v1/trips/search") else {
            Issue.record("a static path with another method is 405"); return
        }
        #expect(allow == ["GET", "POST"])
        #expect(
            String(
                decoding: await router.respond(to: HTTPRequest(method: "POST", path: "/v1/trips/search")).bodyBytes,
                as: UTF8.self) == "search")
        #expect(
            String(
                decoding: await router.respond(to: HTTPRequest(method: "GET", path: "/v1/trips/other")).bodyBytes,
                as: UTF8.self) == "trip other")
    }
}

/// A router is a value: routes added to a copy are not added to the original (they once shared one tree,
/// so a copy's handlers could hold the owner of the original in a retain cycle).
@Suite struct RouterValueTests {
    @Test func aRouteAddedToACopyIsNotInTheOriginal() async {
        var original = Router()
        original.get("/a") { _ in .text("a") }
        var copy = original
        copy.get("/b") { _ in .text("b") }
        #expect(await original.respond(to: HTTPRequest(method: "GET", path: "/b")).status == 404)
        #expect(await copy.respond(to: HTTPRequest(method: "GET", path: "/b")).status == 200)
        #expect(await copy.respond(to: HTTPRequest(method: "GET", path: "/a")).status == 200)
    }
}
