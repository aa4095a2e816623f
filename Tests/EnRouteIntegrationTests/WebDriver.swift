import Foundation
import TestSupport
import HTTPTransport
import CurlTransport

/// Headless Chromium through chromedriver's W3C WebDriver API (JSON over HTTP), for the browser tests.
final class WebDriver: @unchecked Sendable {
    static let chromium = "/usr/bin/chromium"
    static let chromedriver = "/usr/bin/chromedriver"
    static let missing =
        "Chromium or chromedriver is not installed (\(chromium), \(chromedriver)): run scripts/install-web.sh"

    private let process: Process
    private let base: URL
    private let http = CurlHTTPClient(defaultTimeout: .seconds(60))
    private(set) var session = ""

    /// Starts chromedriver on a free port below the ephemeral range (the tests' own client sockets take ports from
    /// 32768 up, so a port there may be taken by the time chromedriver binds it); a start that ends before it says it
    /// listens is tried again on another port, twice.
    private static func launch() async throws -> (Process, URL) {
        var seen = ""
        for _ in 0..<3 {
            let port = Int.random(in: 20_000..<32_768)
            let process = Process()
            // The test process blocks most signals (SIGCHLD among them) and a spawned child inherits that mask, which
            // keeps chromedriver from ever launching Chromium: unblock them first. Line-buffered (stdbuf), so its
            // "started successfully" line reaches the pipe when it is written.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = [
                "-c",
                "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv('/usr/bin/stdbuf', "
                    + "sys.argv[1:])",
                "stdbuf", "-oL", chromedriver, "--port=\(port)",
            ]
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            // chromedriver says on stdout when it listens: read up to that line instead of guessing a delay.
            let reader = out.fileHandleForReading
            seen = await Task.detached {
                var text = ""
                while !text.contains("started successfully") {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                }
                return text
            }.value
            if seen.contains("started successfully") { return (process, URL(string: "http://127.0.0.1:\(port)")!) }
            process.terminate()
        }
        throw Failure("chromedriver did not start: \(seen)")
    }

    /// Starts chromedriver and opens a headless session; throws with the install hint when either is missing.
    init() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.chromium),
            FileManager.default.isExecutableFile(atPath: Self.chromedriver)
        else {
            throw Failure(Self.missing)
        }
        (process, base) = try await Self.launch()
        let caps =
            #"{"capabilities":{"alwaysMatch":{"browserName":"chrome","#
            + #""goog:chromeOptions":{"binary":"\#(Self.chromium)","args":["--headless=new","--no-sandbox","#
            + #""--disable-gpu","--disable-dev-shm-usage","--window-size=1280,900","--no-first-run","#
            + #""--no-default-browser-check"]}}}}"#
        let value = try await call("POST", "/session", caps)
        guard let id = (value as? [String: Any])?["sessionId"] as? String else {
            throw Failure("no WebDriver session: \(String(describing: value))")
        }
        session = id
        _ = try await call("POST", "/session/\(id)/timeouts", #"{"script":20000,"pageLoad":20000}"#)
    }

    /// Ends the session and chromedriver.
    func quit() async {
        if !session.isEmpty { _ = try? await call("DELETE", "/session/\(session)", nil) }
        process.terminate()
        process.waitUntilExit()
    }

    func open(_ url: String) async throws {
        _ = try await call("POST", "/session/\(session)/url", try json(["url": url]))
    }

    /// Runs `script` (a function body) in the page and returns its value.
    func run(_ script: String) async throws -> Any? {
        try await call("POST", "/session/\(session)/execute/sync", try json(["script": script, "args": [String]()]))
    }

    /// Waits in the page (the browser's own timer) until `condition` (a JS expression) is true, at most `milliseconds`.
    /// A page that navigates while the wait runs (the share link reloading itself to its ended page) drops the script
    /// in flight, which chromedriver answers as a script timeout: the wait is then made again on the new page.
    func waitUntil(_ condition: String, milliseconds: Int = 10_000) async throws -> Bool {
        for attempt in 1...3 {
            do {
                return try await poll(condition, milliseconds: milliseconds)
            } catch let failure as Failure where attempt < 3 && failure.description.contains("script timeout") {
                continue
            }
        }
        return false
    }

    private func poll(_ condition: String, milliseconds: Int) async throws -> Bool {
        let script = """
            const done = arguments[arguments.length - 1], t0 = Date.now();
            const check = () => { try { return !!(\(condition)); } catch (e) { return false; } };
            (function poll() { if (check()) done(true); else if (Date.now() - t0 > \(milliseconds)) done(false); else \
            setTimeout(poll, 25); })();
            """
        return try await call(
            "POST", "/session/\(session)/execute/async", try json(["script": script, "args": [String]()])) as? Bool
            ?? false
    }

    /// A PNG of the page now.
    func screenshot() async throws -> Data {
        guard let text = try await call("GET", "/session/\(session)/screenshot", nil) as? String,
            let png = Data(base64Encoded: text)
        else {
            throw Failure("no screenshot")
        }
        return png
    }

    private func json(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    private func call(_ method: String, _ path: String, _ body: String?) async throws -> Any? {
        let request = HTTPClientRequest(
            method: method, url: URL(string: base.absoluteString + path)!,
            headers: body == nil ? [:] : ["Content-Type": "application/json"], body: body.map { Data($0.utf8) })
        let response = try await http.send(request)
        let object =
            try? JSONSerialization.jsonObject(with: response.body, options: [.fragmentsAllowed]) as? [String: Any]
        guard response.status == 200 else {
            throw Failure(
                "WebDriver \(method) \(path): \(response.status) "
                    + "\(String(decoding: response.body, as: UTF8.self).prefix(400))"
            )
        }
        return object?["value"] ?? nil
    }
}
