import Foundation
import Synchronization
import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// A socket the reactor polls for its owner: an upgraded WebSocket, or an SSE connection written directly.
protocol ReactorSocket: AnyObject, Sendable {
    var fd: Int32 { get }
    /// Input, hang-up or error on the socket.
    func readable(buffer: inout [UInt8])
    /// Room to write again.
    func writable()
}

/// One epoll loop for the sockets libmicrohttpd does not poll: upgraded WebSockets, and SSE
/// connections that are suspended in libmicrohttpd while their events are written directly.
///
/// Each registration has its own token in the epoll data, not just the descriptor: once a socket is
/// removed its number may be reused by any socket in the process, and an event already fetched for
/// the old registration must not reach whoever holds the number now.
final class SocketReactor: @unchecked Sendable {
    private struct Registrations {
        var byToken: [UInt64: any ReactorSocket] = [:]
        var tokenByFD: [Int32: UInt64] = [:]
        var next: UInt64 = 1

        func token(of socket: any ReactorSocket) -> UInt64? {
            guard let token = tokenByFD[socket.fd], byToken[token] === socket else { return nil }
            return token
        }
    }

    private let epfd: Int32
    private let wakeFD: Int32
    private let registrations = Mutex(Registrations())
    private let webSockets = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    /// Set by the loop as it ends.
    private let ended = Atomic<Bool>(false)
    private static let wakeToken: UInt64 = 0

    init() {
        epfd = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        var ev = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: Self.wakeToken))
        _ = epoll_ctl(epfd, EPOLL_CTL_ADD, wakeFD, &ev)
        // The thread holds the reactor until `stop()` ends its loop; the reactor does not hold the
        // thread (that cycle would outlive the loop).
        let thread = Thread { self.loop() }
        thread.name = "enroute-reactor"
        thread.start()
    }

    /// Number of WebSockets being served.
    var count: Int { webSockets.load(ordering: .relaxed) }

    /// Starts polling `socket` for input and hang-up (`input` false: hang-up and errors only).
    func add(_ socket: any ReactorSocket, input: Bool = true) {
        let token = registrations.withLock { r -> UInt64 in
            let token = r.next
            r.next += 1
            if let old = r.tokenByFD[socket.fd] { r.byToken[old] = nil }
            r.tokenByFD[socket.fd] = token
            r.byToken[token] = socket
            return token
        }
        if socket is UpgradedSocket { webSockets.wrappingAdd(1, ordering: .relaxed) }
        var ev = epoll_event(events: Self.mask(input: input, output: false), data: epoll_data_t(u64: token))
        _ = epoll_ctl(epfd, EPOLL_CTL_ADD, socket.fd, &ev)
    }

    /// Adds or drops interest in room to write.
    func setWantsWrite(_ socket: any ReactorSocket, _ wants: Bool, input: Bool = true) {
        guard let token = registrations.withLock({ $0.token(of: socket) }) else { return }
        var ev = epoll_event(events: Self.mask(input: input, output: wants), data: epoll_data_t(u64: token))
        _ = epoll_ctl(epfd, EPOLL_CTL_MOD, socket.fd, &ev)
    }

    /// Stops polling `socket`; events fetched before are dropped, but a call already under way may
    /// still finish, so the socket itself refuses I/O once it is done.
    func remove(_ socket: any ReactorSocket) {
        let removed = registrations.withLock { r -> Bool in
            guard let token = r.token(of: socket) else { return false }
            r.byToken[token] = nil
            r.tokenByFD[socket.fd] = nil
            return true
        }
        guard removed else { return }
        _ = epoll_ctl(epfd, EPOLL_CTL_DEL, socket.fd, nil)
        if socket is UpgradedSocket { webSockets.wrappingSubtract(1, ordering: .relaxed) }
    }

    /// The token `socket` is registered under, if it is.
    func token(of socket: any ReactorSocket) -> UInt64? { registrations.withLock { $0.token(of: socket) } }

    /// Every open WebSocket, for shutdown.
    var all: [UpgradedSocket] { registrations.withLock { $0.byToken.values.compactMap { $0 as? UpgradedSocket } } }

    /// Ends the loop; only the first call wakes it. The descriptors stay open until the reactor is gone, so a wake-up
    /// never lands on a number the process has since given to a client's socket (8 stray bytes in someone's stream).
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }

    /// True once the loop has ended.
    var hasEnded: Bool { ended.load(ordering: .acquiring) }

    /// The wake-up's descriptor (for tests).
    var wakeDescriptor: Int32 { wakeFD }

    deinit {
        close(epfd)
        close(wakeFD)
    }

    private static func mask(input: Bool, output: Bool) -> UInt32 {
        var events = EPOLLRDHUP.rawValue
        if input { events |= EPOLLIN.rawValue }
        if output { events |= EPOLLOUT.rawValue }
        return events
    }

    /// Hands one polled event to the socket registered under `token`; nothing if that registration is gone.
    func dispatch(token: UInt64, events flags: UInt32, buffer: inout [UInt8]) {
        let socket = registrations.withLock { $0.byToken[token] }
        guard let socket else { return }
        if flags & EPOLLOUT.rawValue != 0 { socket.writable() }
        if flags & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
            socket.readable(buffer: &buffer)
        }
    }

    private func loop() {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !stopped.load(ordering: .acquiring) {
            let n = epoll_wait(epfd, &events, Int32(events.count), 1000)
            if n < 0 { if errno == EINTR { continue } else { break } }
            for i in 0..<Int(n) {
                let token = events[i].data.u64
                if token == Self.wakeToken {
                    var value: UInt64 = 0
                    _ = Glibc.read(wakeFD, &value, 8)
                    continue
                }
                dispatch(token: token, events: events[i].events, buffer: &buffer)
            }
        }
        ended.store(true, ordering: .releasing)
    }
}

/// An upgraded connection's socket, driven by the reactor; writes may come from any thread.
final class UpgradedSocket: WebSocketTransport, ReactorSocket, LiveMember, @unchecked Sendable {
    private struct State {
        var codec: WebSocketCodec
        var outbound: [UInt8] = []
        var wantsWrite = false
        var closeAfterFlush = false
        var finished = false
        /// Cuts off a client that does not answer our close; cancelled once the socket is finished.
        var closeTimer: Task<Void, Never>?
    }

    let fd: Int32
    private let handle: OpaquePointer
    private let reactor: SocketReactor
    private let state: Mutex<State>
    private let continuation: AsyncStream<WebSocketMessage>.Continuation
    private let maxOutbound: Int
    private let onFinish: @Sendable () -> Void
    private let leave = LeaveNotice()
    private let clock: any Clock<Duration>
    private let closeTimeout: Duration

    /// `clock` times the close handshake: a client that does not answer a close within `closeTimeout` is cut off.
    init(fd: Int32, handle: OpaquePointer, reactor: SocketReactor, maxMessageSize: Int, maxOutbound: Int,
         continuation: AsyncStream<WebSocketMessage>.Continuation, clock: any Clock<Duration>, closeTimeout: Duration,
         onFinish: @escaping @Sendable () -> Void) {
        self.clock = clock
        self.closeTimeout = closeTimeout
        self.fd = fd
        self.handle = handle
        self.reactor = reactor
        self.state = Mutex(State(codec: WebSocketCodec(maxMessageSize: maxMessageSize)))
        self.continuation = continuation
        self.maxOutbound = maxOutbound
        self.onFinish = onFinish
        let flags = fcntl(fd, F_GETFL, 0)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }

    var isOpen: Bool { state.withLock { !$0.finished && !$0.codec.closeSent } }

    func write(_ frame: [UInt8]) -> Bool {
        let ok = state.withLock { enqueueLocked(&$0, frame) }
        if !ok { finishIfDone() }
        return ok
    }

    private func enqueueLocked(_ s: inout State, _ frame: [UInt8]) -> Bool {
        guard !s.finished, !s.codec.closeSent else { return false }
        if s.outbound.count + frame.count > maxOutbound {
            // A reader this far behind is dropped, not buffered without limit.
            s.closeAfterFlush = true
            s.outbound.removeAll()
            return false
        }
        s.outbound.append(contentsOf: frame)
        flushLocked(&s)
        return true
    }

    func close(code: UInt16, reason: String) {
        state.withLock { s in
            guard !s.finished, let frame = s.codec.startClose(code: code, reason: reason) else { return }
            s.outbound.append(contentsOf: frame)
            flushLocked(&s)
        }
        // The client should answer with its own close; don't wait for it forever.
        let timer = Task { [weak self, clock, closeTimeout] in
            do { try await clock.sleep(for: closeTimeout) } catch { return }
            self?.state.withLock { $0.closeAfterFlush = true }
            self?.finishIfDone(force: true)
        }
        // A timer left asleep after the socket is done would keep its clock's sleeper (and a test's
        // manual clock with everything it holds) alive.
        let finished = state.withLock { s -> Bool in
            if !s.finished { s.closeTimer?.cancel(); s.closeTimer = timer }
            return s.finished
        }
        if finished { timer.cancel() }
    }

    /// Feeds byted from a single socket fed in; data from `extra` comes first.
    func feed(_ bytes: [UInt8]) {
        let actions = state.withLock { $0.codec.receive(bytes) }
        perform(actions)
    }

    func readable(buffer: inout [UInt8]) {
        while true {
            // Under the lock and only while not finished: once finished, libmicrohttpd closes the
            // descriptor, and its number may belong to another socket by the time a late event runs.
            let (n, error) = state.withLock { s -> (Int, Int32) in
                guard !s.finished else { return (-2, 0) }
                let n = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
                return (n, n < 0 ? errno : 0)
            }
            if n == -2 { return }
            if n > 0 {
                feed(Array(buffer[0..<n]))
                continue
            }
            if n == 0 || (error != EAGAIN && error != EWOULDBLOCK && error != EINTR) {
                state.withLock { $0.closeAfterFlush = true; $0.outbound.removeAll() }
                finishIfDone(force: true)
            }
            return
        }
    }

    func writable() {
        state.withLock { flushLocked(&$0) }
        finishIfDone()
    }

    private func perform(_ actions: [WebSocketCodec.Action]) {
        for action in actions {
            switch action {
            case .deliver(let message):
                continuation.yield(message)
            case .write(let bytes):
                state.withLock { s in
                    s.outbound.append(contentsOf: bytes)
                    flushLocked(&s)
                }
            case .closeAfterWrite(let bytes, _):
                state.withLock { s in
                    s.outbound.append(contentsOf: bytes)
                    s.closeAfterFlush = true
                    flushLocked(&s)
                }
            }
        }
        finishIfDone()
    }

    private func flushLocked(_ s: inout State) {
        guard !s.finished else {
            s.outbound.removeAll()
            return
        }
        while !s.outbound.isEmpty {
            let n = s.outbound.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                s.outbound.removeFirst(n)
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                s.outbound.removeAll()
                s.closeAfterFlush = true
                break
            }
        }
        let wants = !s.outbound.isEmpty
        if wants != s.wantsWrite {
            s.wantsWrite = wants
            reactor.setWantsWrite(self, wants)
        }
    }

    private func finishIfDone(force: Bool = false) {
        let (finish, timer) = state.withLock { s -> (Bool, Task<Void, Never>?) in
            guard !s.finished, s.closeAfterFlush, s.outbound.isEmpty || force else { return (false, nil) }
            s.finished = true
            defer { s.closeTimer = nil }
            return (true, s.closeTimer)
        }
        guard finish else { return }
        timer?.cancel()
        reactor.remove(self)
        continuation.finish()
        _ = enroute_mhd_upgrade_close(handle)
        onFinish()
        leave.fire()
    }

    // MARK: LiveMember

    func deliver(_ frames: LiveFrames) -> Bool {
        let ok = state.withLock { enqueueLocked(&$0, frames.webSocket) }
        if !ok {
            // The channel drops a member whose delivery failed; it must not be called back from inside.
            leave.cancel()
            finishIfDone()
        }
        return ok
    }

    func end() {
        leave.cancel()
        close(code: WebSocketCloseCode.normal, reason: "")
    }

    func onLeave(_ handler: @escaping @Sendable () -> Void) { leave.set(handler) }
}
