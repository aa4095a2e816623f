import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on loopback for fault tests: it listens on an ephemeral port of 127.0.0.1 and forwards each
/// connection to a target, until told to `cut()` (drop every connection and refuse new ones: a dead link) or to
/// `blackhole()` (accept and hold connections but forward nothing either way: a partition that never answers),
/// and `restore()` it.
///
/// One thread of its own polls every socket (never Swift's cooperative pool); the control calls hand it their
/// change through a pipe and return once it has been applied, so a test never waits on time. Meant for test
/// traffic: a forwarding write blocks that thread while the receiving peer's buffer is full.
public final class TCPFaultProxy: Sendable {
    /// What the proxy does with connections.
    public enum Mode: Sendable, Equatable {
        /// Forwards both ways.
        case forwarding
        /// No listener (connections are refused) and no connection open.
        case cut
        /// Accepts and holds connections, forwards nothing.
        case blackholed
    }

    /// What the proxy failed to do.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    /// The loopback port clients connect to.
    public let port: UInt16
    private let shared: Shared

    /// A proxy forwarding to `host:targetPort` (IPv4), listening at once.
    public init(forwardingTo targetPort: Int, host: String = "127.0.0.1") throws {
        let listener = try Self.listen(on: 0)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            close(listener.descriptor)
            throw Failure(description: "pipe: \(String(cString: strerror(errno)))")
        }
        port = listener.port
        shared = Shared(wakeReader: fds[0], wakeWriter: fds[1])
        let loop = Loop(listener: listener.descriptor, port: listener.port, target: (host, targetPort), shared: shared)
        let thread = Thread { loop.run() }
        thread.name = "TCPFaultProxy \(listener.port) -> \(targetPort)"
        thread.start()
    }

    deinit { shared.send(Request(change: .stop, done: nil)) }

    /// The mode the proxy is in.
    public var mode: Mode { shared.observed.withLock { $0.mode } }
    /// Connections open through the proxy now.
    public var openConnections: Int { shared.observed.withLock { $0.open } }
    /// Connections accepted since the proxy started.
    public var acceptedConnections: Int { shared.observed.withLock { $0.accepted } }

    /// Drops every connection and stops listening, so new ones are refused; returns once that is so.
    public func cut() async throws { try await apply(.mode(.cut)) }

    /// Keeps listening and accepting, but forwards nothing either way until `restore()`.
    public func blackhole() async throws { try await apply(.mode(.blackholed)) }

    /// Listens again on the same port (after `cut`) and forwards again (after `blackhole`, what was held flows on).
    public func restore() async throws { try await apply(.mode(.forwarding)) }

    /// Closes every socket and ends the proxy's thread.
    public func stop() async throws { try await apply(.stop) }

    private func apply(_ change: Change) async throws {
        let failure: String? = await withCheckedContinuation { continuation in
            shared.send(Request(change: change, done: { continuation.resume(returning: $0) }))
        }
        if let failure { throw Failure(description: failure) }
    }

    fileprivate static func listen(on port: UInt16) throws -> (descriptor: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, Glibc.listen(fd, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "cannot listen on 127.0.0.1:\(port): \(reason)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }
}

private enum Change: Sendable {
    case mode(TCPFaultProxy.Mode)
    case stop
}

/// A change and who waits for it (nil: no one); `done` gets nil once applied, or why it could not be.
private struct Request: Sendable {
    let change: Change
    let done: (@Sendable (String?) -> Void)?
}

/// What the proxy and its thread share: the wake pipe, the requests queued for the thread, what it last reported.
/// The pipe closes only when both are gone, so a late wake-up never writes to a pipe without a reader.
private final class Shared: Sendable {
    struct Observed {
        var mode = TCPFaultProxy.Mode.forwarding
        var open = 0
        var accepted = 0
        var stopped = false
    }

    let requests = Mutex<[Request]>([])
    let observed = Mutex(Observed())
    let wakeReader: Int32
    private let wakeWriter: Int32

    init(wakeReader: Int32, wakeWriter: Int32) {
        self.wakeReader = wakeReader
        self.wakeWriter = wakeWriter
    }

    deinit {
        close(wakeReader)
        close(wakeWriter)
    }

    /// Queues `request` and wakes the thread; a request to a stopped proxy is answered at once.
    func send(_ request: Request) {
        let queued = observed.withLock { observed in
            if !observed.stopped { requests.withLock { $0.append(request) } }
            return !observed.stopped
        }
        guard queued else {
            if case .stop = request.change { request.done?(nil) } else { request.done?("the proxy is stopped") }
            return
        }
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }

    /// Marks the proxy stopped and hands back what was queued behind the stop (nothing can queue after it).
    func markStopped() -> [Request] {
        observed.withLock { observed in
            observed.stopped = true
            observed.open = 0
            return requests.withLock { requests in
                defer { requests.removeAll() }
                return requests
            }
        }
    }
}

/// The proxy's thread: owns the listener and every proxied connection.
private final class Loop: @unchecked Sendable {
    // Safety: after `init`, only the proxy's one thread touches this object's vars.

    private struct Pair {
        let client: Int32
        let upstream: Int32
    }

    private var listener: Int32?
    private let port: UInt16
    private let target: (host: String, port: Int)
    private let shared: Shared
    private var pairs: [Pair] = []
    private var mode = TCPFaultProxy.Mode.forwarding
    private var accepted = 0

    init(listener: Int32, port: UInt16, target: (String, Int), shared: Shared) {
        self.listener = listener
        self.port = port
        self.target = target
        self.shared = shared
    }

    func run() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            var watched = [pollfd(fd: shared.wakeReader, events: Int16(POLLIN), revents: 0)]
            if let listener { watched.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0)) }
            let firstPair = watched.count
            if mode == .forwarding {
                for pair in pairs {
                    watched.append(pollfd(fd: pair.client, events: Int16(POLLIN), revents: 0))
                    watched.append(pollfd(fd: pair.upstream, events: Int16(POLLIN), revents: 0))
                }
            }
            guard poll(&watched, nfds_t(watched.count), -1) >= 0 || errno == EINTR else { break }
            if watched[0].revents != 0, !applyRequests() { return }
            if firstPair == 2, watched[1].revents != 0, listener == watched[1].fd { acceptOne() }
            guard mode == .forwarding, watched.count > firstPair else { continue }
            // Pairs closed while forwarding are removed after the pass, so the indices above stay valid.
            var closed = Set<Int32>()
            for index in stride(from: firstPair, to: watched.count, by: 2) {
                let pair = pairs[(index - firstPair) / 2]
                for (from, to, entry) in [
                    (pair.client, pair.upstream, watched[index]), (pair.upstream, pair.client, watched[index + 1]),
                ]
                where entry.revents != 0 && !closed.contains(pair.client) {
                    if !forward(from: from, to: to, buffer: &buffer) { closed.insert(pair.client) }
                }
            }
            if !closed.isEmpty {
                for pair in pairs where closed.contains(pair.client) { closePair(pair) }
                pairs.removeAll { closed.contains($0.client) }
                report()
            }
        }
    }

    /// Moves what `from` has to `to`; false when either end is gone.
    private func forward(from: Int32, to: Int32, buffer: inout [UInt8]) -> Bool {
        let received = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
        guard received > 0 else { return false }
        var offset = 0
        while offset < received {
            let sent = buffer[offset..<received].withUnsafeBytes {
                send(to, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    private func acceptOne() {
        guard let listener else { return }
        let client = accept(listener, nil, nil)
        guard client >= 0 else { return }
        accepted += 1
        guard let upstream = connectUpstream() else {
            close(client)  // the target is down: the client sees its connection closed, as it would without the proxy
            report()
            return
        }
        for fd in [client, upstream] {
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        pairs.append(Pair(client: client, upstream: upstream))
        report()
    }

    private func connectUpstream() -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(target.host)
        address.sin_port = UInt16(target.port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { close(fd); return nil }
        return fd
    }

    /// Applies the queued changes; false once the proxy is stopped (every descriptor closed).
    private func applyRequests() -> Bool {
        var byte = [UInt8](repeating: 0, count: 64)
        _ = read(shared.wakeReader, &byte, byte.count)
        let queued = shared.requests.withLock { requests in
            defer { requests.removeAll() }
            return requests
        }
        for (index, request) in queued.enumerated() {
            switch request.change {
            case .stop:
                for pair in pairs { closePair(pair) }
                pairs.removeAll()
                if let listener { close(listener) }
                listener = nil
                let behind = shared.markStopped()
                request.done?(nil)
                for later in queued[(index + 1)...] + behind { later.done?("the proxy is stopped") }
                return false
            case .mode(.cut):
                for pair in pairs { closePair(pair) }
                pairs.removeAll()
                if let listener { close(listener) }
                listener = nil
                mode = .cut
                report()
                request.done?(nil)
            case .mode(let next):
                var failure: String?
                if listener == nil {
                    do { listener = try TCPFaultProxy.listen(on: port).descriptor } catch { failure = "\(error)" }
                }
                if failure == nil { mode = next }
                report()
                request.done?(failure)
            }
        }
        return true
    }

    private func closePair(_ pair: Pair) {
        close(pair.client)
        close(pair.upstream)
    }

    private func report() {
        let (mode, open, accepted) = (mode, pairs.count, accepted)
        shared.observed.withLock {
            $0.mode = mode
            $0.open = open
            $0.accepted = accepted
        }
    }
}
