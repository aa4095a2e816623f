public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import CEpoll  // <sys/socket.h> as the engine's other socket code sees it: MSG_NOSIGNAL

/// A WebSocket client over a plain POSIX socket (`ws://` or `http://` only), for the Linux tools: FoundationNetworking
/// has no WebSocket. It speaks the engine's own codec from the client's end: its frames are masked (RFC 6455 §5.3),
/// pings are answered, and the close handshake is run.
///
/// Blocking socket work runs on a thread of its own (the reader) and on the caller's for writes, never on Swift's
/// cooperative pool. The masking keys and the handshake's nonce come from `random`.
public final class WebSocketClient: Sendable {
    /// Why a connection could not be made or used.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case unsupportedURL(String)
        case connect(String)
        /// The server answered the upgrade with this status and body (a problem document) instead of 101.
        case refused(status: Int, body: [UInt8])
        case handshake(String)
        case closed

        public var description: String {
            switch self {
            case .unsupportedURL(let url): "cannot open a WebSocket to \(url) (ws:// or http:// only)"
            case .connect(let why): "cannot connect: \(why)"
            case .refused(let status, let body):
                "the server answered \(status): \(String(decoding: body, as: UTF8.self))"
            case .handshake(let why): "the WebSocket handshake failed: \(why)"
            case .closed: "the WebSocket is closed"
            }
        }
    }

    private struct State {
        var codec: WebSocketCodec
        var closed = false
    }

    /// Complete messages from the server; finishes when the connection closes.
    public let messages: AsyncStream<WebSocketMessage>
    private let fd: Int32
    private let state: Mutex<State>

    private init(fd: Int32, codec: WebSocketCodec, leftover: [UInt8]) {
        self.fd = fd
        state = Mutex(State(codec: codec))
        let (stream, continuation) = AsyncStream<WebSocketMessage>.makeStream()
        messages = stream
        let thread = Thread { [self] in self.readLoop(first: leftover, continuation) }
        thread.name = "enroute.websocket-client"
        thread.start()
    }

    deinit { Glibc.close(fd) }

    /// Bytes from the system's random source.
    public static func systemRandom(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// Connects to `url`, sends the upgrade with `headers` (e.g. `Authorization`), and checks the server's answer.
    public static func connect(
        to url: URL, headers: [(String, String)] = [], maxMessageSize: Int = 1 << 20,
        random: @escaping @Sendable (Int) -> [UInt8] = WebSocketClient.systemRandom
    ) async throws -> WebSocketClient {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        try connectBlocking(url, headers: headers, maxMessageSize: maxMessageSize, random: random)
                    })
            }.start()
        }
    }

    /// Sends a text message.
    public func send(text: String) throws {
        try write { $0.codec.outgoing(opcode: 0x1, payload: Array(text.utf8)) }
    }

    /// Starts the close handshake; `messages` finishes once the server answers.
    public func close(code: UInt16 = WebSocketCloseCode.normal) {
        try? write { $0.codec.startClose(code: code) ?? [] }
    }

    private func write(_ frame: (inout State) -> [UInt8]) throws {
        try state.withLock { s in
            guard !s.closed else { throw Failure.closed }
            let bytes = frame(&s)
            guard Self.sendAll(fd, bytes) else { s.closed = true; throw Failure.closed }
        }
    }

    private func readLoop(first: [UInt8], _ continuation: AsyncStream<WebSocketMessage>.Continuation) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var incoming = first
        reading: while true {
            if !incoming.isEmpty {
                let actions = state.withLock { $0.codec.receive(incoming) }
                for action in actions {
                    switch action {
                    case .deliver(let message): continuation.yield(message)
                    case .write(let bytes): _ = try? write { _ in bytes }
                    case .closeAfterWrite(let bytes, _):
                        if !bytes.isEmpty { _ = try? write { _ in bytes } }
                        break reading
                    }
                }
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            incoming = Array(buffer[0..<n])
        }
        state.withLock { $0.closed = true }
        shutdown(fd, Int32(SHUT_RDWR))
        continuation.finish()
    }

    private static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    private static func connectBlocking(
        _ url: URL, headers: [(String, String)], maxMessageSize: Int,
        random: @escaping @Sendable (Int) -> [UInt8]
    ) throws -> WebSocketClient {
        guard let scheme = url.scheme?.lowercased(), scheme == "ws" || scheme == "http", let host = url.host,
            !host.isEmpty
        else {
            throw Failure.unsupportedURL(url.absoluteString)
        }
        let port = url.port ?? 80
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &found)
        guard rc == 0, let first = found else {
            throw Failure.connect("cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(found) }
        var fd: Int32 = -1
        var lastError: Int32 = 0
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            let s = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            if s >= 0 {
                if Glibc.connect(s, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { fd = s; break }
                lastError = errno
                Glibc.close(s)
            }
            next = info.pointee.ai_next
        }
        guard fd >= 0 else { throw Failure.connect("\(host):\(port): \(String(cString: strerror(lastError)))") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        do {
            let key = Data(random(16)).base64EncodedString()
            var target = url.path.isEmpty ? "/" : url.path
            if let query = url.query { target += "?\(query)" }
            var request =
                "GET \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            request += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
            for (name, value) in headers { request += "\(name): \(value)\r\n" }
            request += "\r\n"
            guard sendAll(fd, Array(request.utf8)) else { throw Failure.connect("the server closed the connection") }
            let (status, fields, rest) = try readHead(fd)
            guard status == 101 else {
                throw Failure.refused(
                    status: status, body: try readBody(fd, have: rest, length: Int(fields["content-length"] ?? "") ?? 0)
                )
            }
            guard fields["sec-websocket-accept"] == WebSocketCodec.acceptValue(forKey: key) else {
                throw Failure.handshake("Sec-WebSocket-Accept does not answer the key")
            }
            let codec = WebSocketCodec(maxMessageSize: maxMessageSize, maskKey: { random(4) })
            return WebSocketClient(fd: fd, codec: codec, leftover: rest)
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// The response head (status, lowercased header fields) and the bytes read past it.
    private static func readHead(_ fd: Int32) throws -> (Int, [String: String], [UInt8]) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let separator = Array("\r\n\r\n".utf8)
        while received.firstRange(of: separator) == nil {
            guard received.count < 64 * 1024 else { throw Failure.handshake("the response head is too long") }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw Failure.handshake("the server closed the connection during the handshake") }
            received += buffer[0..<n]
        }
        let end = received.firstRange(of: separator)!
        let lines = String(decoding: received[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Failure.handshake("no status line")
        }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, fields, Array(received[end.upperBound...]))
    }

    private static func readBody(_ fd: Int32, have: [UInt8], length: Int) throws -> [UInt8] {
        var body = have
        var buffer = [UInt8](repeating: 0, count: 4096)
        while body.count < min(length, 1 << 20) {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            body += buffer[0..<n]
        }
        return Array(body.prefix(length))
    }
}
