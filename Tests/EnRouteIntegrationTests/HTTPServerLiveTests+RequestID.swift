import Foundation
import Testing
import Synchronization
import TestSupport
import EnRouteLogging
@testable import HTTPEngine

extension HTTPServerLiveTests {
    final class LogLines: Sendable {
        let all = Mutex<[String]>([])
        var logger: Logger {
            Logger(
                label: "api",
                handler: StreamLogHandler(format: .json, level: .info, now: { Date(timeIntervalSince1970: 0) }) {
                    line in
                    self.all.withLock { $0.append(line) }
                })
        }
        var requestIDs: [String?] {
            all.withLock { $0 }.map { line in
                ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: String])?["request-id"]
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func theIdIsAnsweredAndOnEveryLineTheHandlerWrites() async throws {
        let lines = LogLines()
        let log = lines.logger
        var router = Router()
        router.get("/sync") { _ in
            log.info("sync handler")
            return .text("ok")
        }
        router.get("/async") { _ async in
            log.info("async handler")
            await Task.yield()
            log.warning("async handler, later")
            return .text("ok")
        }
        var config = HTTPServerConfiguration()
        config.port = 0
        config.threads = 1
        config.requestIDs = .counting(prefix: "srv")
        let server = HTTPServer(router: router, configuration: config, clock: ManualClock())
        try server.start()
        let client = try TCPTestClient(port: server.port)
        client.write("GET /sync HTTP/1.1\r\nHost: x\r\nX-Request-Id: from-client-1\r\n\r\n")
        let first = try await client.readResponse()
        client.write("GET /async HTTP/1.1\r\nHost: x\r\n\r\n")
        let second = try await client.readResponse()
        await server.shutdown()
        #expect(first.headers["x-request-id"] == "from-client-1")
        #expect(second.headers["x-request-id"] == "srv-1")
        #expect(lines.requestIDs == ["from-client-1", "srv-1", "srv-1"])
    }
}
