import Glibc  // the server runs on Linux, like the engine's other socket code

/// One TCP connection to a Redis server: a non-blocking socket that every call waits on with `poll` up to a
/// deadline. Blocking by design: only `RedisConnection`'s queue calls it, never Swift's cooperative pool.
final class RedisSocket {
    let descriptor: Int32
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    private let host: String
    private let port: Int

    private init(descriptor: Int32, host: String, port: Int) {
        self.descriptor = descriptor
        self.host = host
        self.port = port
    }

    deinit { close(descriptor) }

    /// Opens a connection to `host:port`, trying each resolved address until `timeout` has passed.
    static func connect(host: String, port: Int, timeout: Duration) throws(RedisClientError) -> RedisSocket {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &found)
        guard rc == 0, let first = found else {
            throw .unresolvableHost(host, reason: String(cString: gai_strerror(rc)))
        }
        defer { freeaddrinfo(found) }
        var reason = "no address"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            next = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else { reason = Self.errorText(errno); continue }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 {
                return RedisSocket(descriptor: fd, host: host, port: port).configured()
            }
            guard errno == EINPROGRESS else { reason = Self.errorText(errno); close(fd); continue }
            guard Self.wait(fd, for: Int16(POLLOUT), until: deadline) else {
                close(fd)
                throw .timedOut(host: host, port: port, after: timeout)
            }
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length)
            if failure == 0 { return RedisSocket(descriptor: fd, host: host, port: port).configured() }
            reason = Self.errorText(failure)
            close(fd)
        }
        throw .connectionFailed(host: host, port: port, reason: reason)
    }

    private func configured() -> RedisSocket {
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return self
    }

    /// Sends all of `bytes` before `deadline`.
    func write(_ bytes: [UInt8], until deadline: ContinuousClock.Instant, timeout: Duration) throws(RedisClientError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 { offset += sent; continue }
            guard sent < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
                throw .connectionClosed(host: host, port: port)
            }
            guard Self.wait(descriptor, for: Int16(POLLOUT), until: deadline) else {
                throw .timedOut(host: host, port: port, after: timeout)
            }
        }
    }

    /// Reads what has arrived (waiting for at least one byte until `deadline`) into `parser`.
    func read(
        into parser: inout RESPParser, until deadline: ContinuousClock.Instant, timeout: Duration
    ) throws(RedisClientError) {
        while true {
            let received = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if received > 0 {
                parser.append(chunk[0..<received])
                return
            }
            guard received < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
                throw .connectionClosed(host: host, port: port)
            }
            guard Self.wait(descriptor, for: Int16(POLLIN), until: deadline) else {
                throw .timedOut(host: host, port: port, after: timeout)
            }
        }
    }

    /// True when an idle connection has been closed or reset by the other end (it has nothing to say unasked).
    var isClosedByPeer: Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 0) > 0 else { return false }
        if entry.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return true }
        var byte: UInt8 = 0
        let peeked = recv(descriptor, &byte, 1, Int32(MSG_PEEK))
        return peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// Waits until `fd` is ready for `events` or `deadline` passes (false then); an error or hang-up counts as ready.
    private static func wait(_ fd: Int32, for events: Int16, until deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return false }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { return true }  // the following send/recv reports what went wrong
        }
    }

    private static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }
}
