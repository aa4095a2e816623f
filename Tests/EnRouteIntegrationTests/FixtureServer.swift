import Foundation
import Synchronization

/// The Python fixture server (Fixtures/http_fixture_server.py), started once per test process on an
/// ephemeral port. It exits when this process closes its stdin.
enum FixtureServer {
    private static let launched = Task { try await launch() }
    private static let running = Mutex<[Process]>([])

    /// The server's base URL, starting it on first use.
    static func baseURL() async throws -> URL { try await launched.value }

    /// The URL of `path` on the server.
    static func url(_ path: String) async throws -> URL {
        try await URL(string: path, relativeTo: baseURL())!.absoluteURL
    }

    private static func launch() async throws -> URL {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/http_fixture_server.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        running.withLock { $0.append(process) }
        let reader = output.fileHandleForReading
        // Wait for the "PORT n" line on a plain thread: the read blocks.
        let line: String = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var bytes: [UInt8] = []
                while true {
                    let chunk = reader.readData(ofLength: 1)
                    guard let byte = chunk.first, byte != 0x0A else { break }
                    bytes.append(byte)
                }
                continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
            }
        }
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5)) else {
            throw FixtureError.noPort(line)
        }
        return URL(string: "http://127.0.0.1:\(port)/")!
    }

    enum FixtureError: Error { case noPort(String) }
}
