import Foundation
import EnRouteCrypto
import EnRouteNotifications
import EnRouteAPNs
import Synchronization

/// The Python APNs stand-in (Fixtures/apns_standin.py) on an ephemeral port, one per test.
/// It exits when this object's stdin pipe closes.
actor APNsStandIn {
    let process = Process()
    let input = Pipe()
    let output = Pipe()
    nonisolated let directory: URL
    nonisolated let keyPEM: String
    nonisolated let port: Int
    nonisolated let certificate: String
    static let keyID = "ABC123DEFG"
    static let teamID = "TEAM123456"
    static let topic = "com.enroute.app"

    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("apns-standin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        keyPEM = try ES256Signer.generatePrivateKeyPEM()
        let p8 = directory.appendingPathComponent("AuthKey.p8")
        try keyPEM.write(to: p8, atomically: true, encoding: .utf8)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Fixtures/apns_standin.py")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", script.path, "--dir", directory.path, "--p8", p8.path, "--key-id", Self.keyID,
            "--team", Self.teamID, "--topic", Self.topic,
        ]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let line = await Self.readLine(output.fileHandleForReading)
        let parts = line.split(separator: " ")
        guard parts.count == 4, parts[0] == "PORT", let port = Int(parts[1]) else { throw StandInError.noPort(line) }
        self.port = port
        certificate = String(parts[3])
    }

    deinit {
        try? input.fileHandleForWriting.close()
        try? FileManager.default.removeItem(at: directory)
    }

    enum StandInError: Error { case noPort(String), badReply(String) }

    /// The configuration a client uses to reach this stand-in.
    nonisolated var configuration: APNsConfiguration {
        APNsConfiguration(keyID: Self.keyID, teamID: Self.teamID, privateKeyPEM: keyPEM, topic: Self.topic)
    }

    /// A curl transport whose both environments point here, trusting the self-signed certificate.
    nonisolated func transport() -> CurlAPNsTransport {
        let url = "https://127.0.0.1:\(port)"
        return CurlAPNsTransport(
            hosts: [.sandbox: url, .production: url], caFile: certificate, requestTimeout: .seconds(10))
    }

    /// Queues answers for `token` ("*" for any token).
    nonisolated func script(token: String, _ responses: [[String: Any]]) async throws {
        _ = try await command(["cmd": "script", "token": token, "responses": responses])
    }

    /// How an outage looks to the client.
    enum Outage: String, Sendable, CaseIterable { case refuse, serviceUnavailable = "503" }

    /// Starts an outage: every connection dropped and new ones refused, or every request answered 503.
    nonisolated func goDown(_ outage: Outage) async throws {
        _ = try await command(["cmd": "down", "mode": outage.rawValue])
    }

    /// Ends the outage.
    nonisolated func comeBack() async throws {
        _ = try await command(["cmd": "up"])
    }

    /// Every request received so far, in arrival order.
    nonisolated func received() async throws -> [[String: Any]] {
        try await command(["cmd": "received"])["received"] as? [[String: Any]] ?? []
    }

    private nonisolated func command(_ object: [String: Any]) async throws -> [String: Any] {
        let line = await roundTrip(try JSONSerialization.data(withJSONObject: object) + Data("\n".utf8))
        guard let reply = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
            throw StandInError.badReply(line)
        }
        return reply
    }

    private func roundTrip(_ data: Data) async -> String {
        input.fileHandleForWriting.write(data)
        return await Self.readLine(output.fileHandleForReading)
    }

    /// Reads one line on a plain thread: the read blocks.
    private static func readLine(_ handle: FileHandle) async -> String {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var bytes: [UInt8] = []
                while true {
                    let chunk = handle.readData(ofLength: 1)
                    guard let byte = chunk.first, byte != 0x0A else { break }
                    bytes.append(byte)
                }
                continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
            }
        }
    }
}
