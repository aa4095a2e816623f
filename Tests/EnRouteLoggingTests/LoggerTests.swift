import Foundation
import Synchronization
import Testing
import EnRouteLogging

/// Records carry their level, label, fields and request id, as text or as JSON lines, and nothing below the level is
/// evaluated.
@Suite struct LoggerTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000.25)

    final class Lines: Sendable {
        let all = Mutex<[String]>([])
        var written: [String] { all.withLock { $0 } }
        func logger(_ format: LogFormat, level: Logger.Level = .info) -> Logger {
            Logger(
                label: "payments",
                handler: StreamLogHandler(format: format, level: level, now: { LoggerTests.t0 }) { line in
                    self.all.withLock { $0.append(line) }
                })
        }
    }

    @Test func aTextLineHasTheTimeLevelLabelMessageAndFieldsInKeyOrder() {
        let lines = Lines()
        var log = lines.logger(.text)
        log[metadataKey: "node"] = "n1"
        log.warning("the hold was not released", metadata: ["trip": "T1", "reason": "the bank said no"])
        #expect(
            lines.written == [
                "2027-01-15T08:00:00.250Z warning payments: the hold was not released node=n1 "
                    + "reason=\"the bank said no\" trip=T1"
            ])
    }

    @Test func nothingBelowTheLevelIsWrittenOrEvaluated() {
        let lines = Lines()
        let log = lines.logger(.text, level: .notice)
        let evaluated = Mutex(0)
        func expensive() -> Logger.Message {
            evaluated.withLock { $0 += 1 }
            return "costly"
        }
        log.info(expensive())
        log.debug(expensive())
        #expect(lines.written.isEmpty)
        #expect(evaluated.withLock { $0 } == 0)
        log.error(expensive())
        #expect(lines.written.count == 1)
        #expect(evaluated.withLock { $0 } == 1)
    }

    @Test func everyLineARequestCausesCarriesItsId() async {
        let lines = Lines()
        let log = lines.logger(.json)
        await LogContext.$requestID.withValue("req-42") {
            log.info("quoted")
            await Task { log.info("held") }.value
        }
        log.info("after")
        let objects = lines.written.map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: String] ?? [:]
        }
        #expect(objects.map { $0["request-id"] } == ["req-42", "req-42", nil])
        #expect(objects.map { $0["message"] } == ["quoted", "held", "after"])
    }

    @Test func aJSONLineIsOneObjectThatAnyParserReads() throws {
        let lines = Lines()
        var log = lines.logger(.json)
        log[metadataKey: "message"] = "a field named like a key"
        log.error(
            "a \"quoted\" line\nwith a break, a tab\tand a bell \u{07}",
            metadata: ["ids": ["T1", "T2"], "retry": ["after": "5", "unit": "s"]])
        let line = try #require(lines.written.first)
        #expect(!line.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["time"] as? String == "2027-01-15T08:00:00.250Z")
        #expect(object["level"] as? String == "error")
        #expect(object["label"] as? String == "payments")
        #expect(object["message"] as? String == "a \"quoted\" line\nwith a break, a tab\tand a bell \u{07}")
        #expect(object["field.message"] as? String == "a field named like a key")
        #expect(object["ids"] as? [String] == ["T1", "T2"])
        #expect(object["retry"] as? [String: String] == ["after": "5", "unit": "s"])
        #expect(line.hasPrefix("{\"time\":"))
    }

    @Test func levelsAreOrderedFromTraceToCritical() {
        #expect(Logger.Level.allCases.sorted() == [.trace, .debug, .info, .notice, .warning, .error, .critical])
        #expect(Logger.Level.warning > .notice)
        #expect(Logger(label: "x", handler: DiscardLogHandler()).logLevel == .critical)
    }
}
