public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking loopback TCP client for live-socket tests: write raw bytes, read until a condition holds.
///
/// Reads wait on the socket with a deadline (a guard against a hung test), never on a timer, and run on
/// the client's own queue so that a waiting test never blocks Swift's cooperative thread pool.
public final class TCPTestClient: @unchecked Sendable {
    private let queue = DispatchQueue(label: "enroute.tcp-test-client")
    public enum Failure: Error { case connect(Int32), timedOut(received: String) }

    private let fd: Int32
    /// Everything received and not yet consumed.
    public private(set) var received: [UInt8] = []
    /// True once the server closed the connection (or reset it).
    public private(set) var closedByPeer = false
    /// The errno of the read that found the connection gone (0 for an orderly close).
    public private(set) var closeErrno: Int32 = 0

    /// Connects to 127.0.0.1:`port`; `receiveBuffer` fixes the socket's receive buffer (the kernel's own sizing
    /// otherwise), for a test that must fill it.
    public init(port: UInt16, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { let e = errno; close(fd); throw Failure.connect(e) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    /// Sends bytes; returns false if the connection is gone.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// Sends UTF-8 text.
    @discardableResult
    public func write(_ text: String) -> Bool { write(Array(text.utf8)) }

    /// Runs blocking socket work on the client's queue.
    private func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Reads until `done` holds for what has been received, the peer closes, or `limit` passes (then throws).
    public func read(until done: @escaping @Sendable ([UInt8]) -> Bool, limit: TimeInterval = 10) async throws {
        try await offPool { try self.readBlocking(until: done, limit: limit) }
    }

    private func readBlocking(until done: ([UInt8]) -> Bool, limit: TimeInterval) throws {
        let deadline = Date().addingTimeInterval(limit)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !done(received) {
            if closedByPeer { return }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw Failure.timedOut(received: String(decoding: received, as: UTF8.self)) }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(min(remaining, 1) * 1000))
            if ready <= 0 { continue }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { closedByPeer = true; closeErrno = n < 0 ? errno : 0; return }
            received.append(contentsOf: buffer[0..<n])
        }
    }

    /// Reads until the received text contains `marker`.
    public func read(untilContains marker: String, limit: TimeInterval = 10) async throws {
        let needle = Array(marker.utf8)
        try await read(until: { $0.firstRange(of: needle) != nil }, limit: limit)
    }

    /// Reads until the server closes the connection.
    public func readUntilClosed(limit: TimeInterval = 10) async throws {
        try await read(until: { _ in false }, limit: limit)
    }

    /// Received bytes as text.
    public var text: String { String(decoding: received, as: UTF8.self) }

    /// The body received so far after the head, with chunked framing removed (complete chunks only).
    public var dechunkedBody: String {
        guard let head = received.firstRange(of: Array("\r\n\r\n".utf8)) else { return "" }
        var rest = Array(received[head.upperBound...])
        var body: [UInt8] = []
        while let line = rest.firstRange(of: Array("\r\n".utf8)),
            let size = Int(String(decoding: rest[..<line.lowerBound], as: UTF8.self), radix: 16),
            size > 0, rest.count >= line.upperBound + size + 2
        {
            body += rest[line.upperBound..<(line.upperBound + size)]
            rest.removeFirst(line.upperBound + size + 2)
        }
        return String(decoding: body, as: UTF8.self)
    }

    /// Drops the first `count` received bytes.
    public func consume(_ count: Int) { received.removeFirst(min(count, received.count)) }

    /// Reads one complete HTTP/1.1 response with a Content-Length body and consumes it.
    public func readResponse(
        limit: TimeInterval = 10
    ) async throws -> (status: Int, headers: [String: String], body: [UInt8]) {
        try await offPool { try self.readResponseBlocking(limit: limit) }
    }

    private func readResponseBlocking(
        limit: TimeInterval
    ) throws -> (status: Int, headers: [String: String], body: [UInt8]) {
        let separator = Array("\r\n\r\n".utf8)
        try readBlocking(until: { $0.firstRange(of: separator) != nil }, limit: limit)
        guard let end = received.firstRange(of: separator) else {
            throw Failure.timedOut(received: text + " (closed: \(closedByPeer), errno \(closeErrno))")
        }
        let head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let status = Int(lines.removeFirst().split(separator: " ")[1]) ?? 0
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        let bodyStart = end.upperBound
        try readBlocking(until: { $0.count >= bodyStart + length }, limit: limit)
        let body = Array(received[bodyStart..<min(received.count, bodyStart + length)])
        consume(bodyStart + length)
        return (status, headers, body)
    }

    /// A masked client WebSocket frame (RFC 6455 §5.2).
    public static func webSocketFrame(opcode: UInt8, payload: [UInt8], fin: Bool = true, masked: Bool = true) -> [UInt8]
    {
        var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            out.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            out += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8((UInt64(payload.count) >> UInt64(shift)) & 0xFF))
            }
        }
        guard masked else { return out + payload }
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        out += key
        out += payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
        return out
    }

    /// Reads one unmasked server frame and consumes it: (opcode, payload).
    public func readWebSocketFrame(limit: TimeInterval = 10) async throws -> (opcode: UInt8, payload: [UInt8]) {
        try await offPool { try self.readWebSocketFrameBlocking(limit: limit) }
    }

    private func readWebSocketFrameBlocking(limit: TimeInterval) throws -> (opcode: UInt8, payload: [UInt8]) {
        func header(_ b: [UInt8]) -> (Int, Int)? {
            guard b.count >= 2 else { return nil }
            let len = Int(b[1] & 0x7F)
            if len < 126 { return (2, len) }
            if len == 126 { return b.count >= 4 ? (4, Int(b[2]) << 8 | Int(b[3])) : nil }
            guard b.count >= 10 else { return nil }
            var v = 0
            for i in 2..<10 { v = v << 8 | Int(b[i]) }
            return (10, v)
        }
        try readBlocking(until: { b in header(b).map { b.count >= $0.0 + $0.1 } ?? false }, limit: limit)
        guard let (h, len) = header(received), received.count >= h + len else { throw Failure.timedOut(received: text) }
        let frame = (received[0] & 0x0F, Array(received[h..<(h + len)]))
        consume(h + len)
        return frame
    }
}
