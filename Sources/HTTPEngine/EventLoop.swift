import Foundation
import Synchronization
import CEpoll

/// One thread polling its connections' sockets with epoll (edge-triggered), plus the shared listener.
///
/// A connection lives on one loop for its life; its socket is read and closed only there. Other threads
/// (a handler's task, a stream's publisher) write to it under the connection's lock and hand the loop work
/// through `post`. Each registration carries its own token (slot and generation), not the descriptor: once a
/// connection is closed its number may be reused by any socket in the process, and an event already fetched
/// for the old one must not reach whoever holds the number now.
final class EventLoop: @unchecked Sendable {
    let index: Int
    private let epfd: Int32
    private let wakeFD: Int32
    /// Loop thread only.
    private var slots: [Connection?] = []
    private var generations: [UInt32] = []
    private var freeSlots: [Int] = []
    /// Connections to serve again after this round of events (a client that pipelined many requests).
    private var deferred: [Connection] = []
    private let inbox = Mutex<[@Sendable () -> Void]>([])
    private let wakePending = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let ended = Atomic<Bool>(false)
    private var listener: Int32 = -1
    /// The listener is out of this loop's epoll set because descriptors ran out (loop thread only, mirrored in
    /// `listenerPausedFlag` for the server's timer).
    private var listenerPaused = false
    private let listenerPausedFlag = Atomic<Bool>(false)
    /// Takes one pending connection: `accept4`, or a test's stand-in; -1 with `errno` set on failure.
    private let accept: @Sendable (Int32) -> Int32
    /// Runs on the loop's thread each time the listener is paused.
    private let onPause: @Sendable () -> Void
    /// Set until the loop ends (it holds the server's core, which holds the loop).
    private var onAccept: (@Sendable (Int32, EventLoop) -> Void)?
    private let elapsed: @Sendable () -> Duration
    private var onEnd: (@Sendable () -> Void)?
    /// Where each read lands before it is parsed (loop thread only).
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    /// Where answers written on the loop are assembled (loop thread only).
    var output: [UInt8] = []
    /// The server's clock, read once per wake-up (loop thread only).
    private(set) var now: Duration = .zero
    /// The `Date` field, formatted once a second.
    let dates: DateCache

    static let wakeToken = UInt64.max
    static let listenerToken = UInt64.max - 1

    init(
        index: Int, elapsed: @escaping @Sendable () -> Duration, dates: DateCache,
        accept: @escaping @Sendable (Int32) -> Int32 = EventLoop.systemAccept,
        onPause: @escaping @Sendable () -> Void = {}, onAccept: @escaping @Sendable (Int32, EventLoop) -> Void
    ) {
        self.index = index
        self.elapsed = elapsed
        self.dates = dates
        self.accept = accept
        self.onPause = onPause
        self.onAccept = onAccept
        epfd = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        var ev = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: Self.wakeToken))
        _ = epoll_ctl(epfd, EPOLL_CTL_ADD, wakeFD, &ev)
        output.reserveCapacity(16 * 1024)
    }

    deinit {
        close(epfd)
        close(wakeFD)
        scratch.deallocate()
    }

    /// Starts the loop's thread; `onEnd` runs on it as it ends.
    func start(name: String, onEnd: @escaping @Sendable () -> Void) {
        self.onEnd = onEnd
        // The thread holds the loop until it ends; the loop does not hold the thread.
        let thread = Thread { self.run() }
        thread.name = name
        thread.start()
    }

    /// Polls `fd` for new connections (many loops share it; the kernel wakes one of them).
    func listen(on fd: Int32) {
        post { [self] in
            listener = fd
            var ev = epoll_event(
                events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue, data: epoll_data_t(u64: Self.listenerToken))
            _ = epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)
        }
    }

    /// Stops polling the listener, then runs `done`.
    func stopListening(_ done: @escaping @Sendable () -> Void) {
        post { [self] in
            if listener >= 0, !listenerPaused { _ = epoll_ctl(epfd, EPOLL_CTL_DEL, listener, nil) }
            listener = -1
            listenerPaused = false
            listenerPausedFlag.store(false, ordering: .relaxed)
            done()
        }
    }

    /// True while this loop has stopped polling the listener because descriptors ran out.
    var isListenerPaused: Bool { listenerPausedFlag.load(ordering: .relaxed) }

    /// Polls the listener again after a pause (soon, on the loop's thread); nothing if it is not paused.
    func resumeListening() {
        guard isListenerPaused else { return }
        post { [self] in resumeListeningOnLoop() }
    }

    private func pauseListening() {
        guard listener >= 0, !listenerPaused else { return }
        _ = epoll_ctl(epfd, EPOLL_CTL_DEL, listener, nil)
        listenerPaused = true
        listenerPausedFlag.store(true, ordering: .relaxed)
        onPause()
    }

    private func resumeListeningOnLoop() {
        guard listener >= 0, listenerPaused else { return }
        listenerPaused = false
        listenerPausedFlag.store(false, ordering: .relaxed)
        // Level-triggered: a newcomer already waiting in the backlog wakes the loop at once.
        var ev = epoll_event(
            events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue,
            data: epoll_data_t(u64: Self.listenerToken))
        _ = epoll_ctl(epfd, EPOLL_CTL_ADD, listener, &ev)
    }

    /// Runs `job` on the loop's thread, soon.
    func post(_ job: @escaping @Sendable () -> Void) {
        inbox.withLock { $0.append(job) }
        if !wakePending.exchange(true, ordering: .acquiringAndReleasing) {
            var one: UInt64 = 1
            _ = Glibc.write(wakeFD, &one, 8)
        }
    }

    /// Closes every connection and ends the loop; only the first call counts. The descriptors stay open until the loop
    /// is gone, so a late wake-up never lands on a number the process has since given to a client's socket.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        post { [self] in
            for case let connection? in slots { connection.closeNow() }
        }
    }

    /// True once the loop has ended.
    var hasEnded: Bool { ended.load(ordering: .acquiring) }

    /// The wake-up's descriptor (for tests).
    var wakeDescriptor: Int32 { wakeFD }

    // MARK: Connections (loop thread)

    /// Takes an accepted socket: registers it and makes its connection, or closes it when `make` declines.
    func adopt(_ fd: Int32, make: (_ token: UInt64) -> Connection?) {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = slots.count
            slots.append(nil)
            generations.append(0)
        }
        let token = UInt64(generations[slot]) << 32 | UInt64(slot)
        guard let connection = make(token) else {
            freeSlots.append(slot)
            Glibc.close(fd)
            return
        }
        slots[slot] = connection
        var ev = epoll_event(
            events: EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue,
            data: epoll_data_t(u64: token))
        _ = epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)
    }

    /// Forgets a closed connection: its slot's next holder gets another token.
    func release(token: UInt64) {
        let slot = Int(token & 0xFFFF_FFFF)
        guard slot < slots.count, generations[slot] == UInt32(token >> 32) else { return }
        slots[slot] = nil
        generations[slot] &+= 1
        freeSlots.append(slot)
        // A connection's descriptor was just closed: one is free for a newcomer.
        resumeListeningOnLoop()
    }

    /// The connection registered under `token`, if it still is.
    func connection(for token: UInt64) -> Connection? {
        let slot = Int(token & 0xFFFF_FFFF)
        guard slot < slots.count, generations[slot] == UInt32(token >> 32) else { return nil }
        return slots[slot]
    }

    /// Serves `connection` again after this round of events.
    func serveLater(_ connection: Connection) { deferred.append(connection) }

    /// Hands one polled event to the connection registered under `token`; nothing if that registration is gone.
    func dispatch(token: UInt64, events: UInt32) {
        connection(for: token)?.handle(events: events)
    }

    // MARK: The loop

    private func run() {
        let capacity = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        while true {
            let n = epoll_wait(epfd, events, Int32(capacity), deferred.isEmpty ? -1 : 0)
            if n < 0, errno != EINTR { break }
            now = elapsed()
            for i in 0..<Int(max(n, 0)) {
                let token = events[i].data.u64
                switch token {
                case Self.wakeToken:
                    var value: UInt64 = 0
                    _ = Glibc.read(wakeFD, &value, 8)
                    wakePending.store(false, ordering: .releasing)
                    let jobs = inbox.withLock { jobs -> [@Sendable () -> Void] in
                        defer { jobs.removeAll() }
                        return jobs
                    }
                    for job in jobs { job() }
                case Self.listenerToken:
                    acceptAll()
                default:
                    dispatch(token: token, events: events[i].events)
                }
            }
            if !deferred.isEmpty {
                let again = deferred
                deferred.removeAll()
                for connection in again { connection.drive() }
            }
            if stopped.load(ordering: .acquiring), slots.allSatisfy({ $0 == nil }) {
                let jobs = inbox.withLock { jobs -> [@Sendable () -> Void] in
                    defer { jobs.removeAll() }
                    return jobs
                }
                for job in jobs { job() }
                break
            }
        }
        ended.store(true, ordering: .releasing)
        onAccept = nil
        onEnd?()
        onEnd = nil
    }

    private func acceptAll() {
        guard listener >= 0 else { return }
        // A bounded batch: the other loops take their turn at a listener that stays readable.
        for _ in 0..<64 {
            let fd = accept(listener)
            if fd < 0 {
                switch AcceptFailure(errno: errno) {
                case .retry: continue
                case .drained: return
                case .exhausted:
                    pauseListening()
                    return
                }
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            guard let onAccept else { Glibc.close(fd); return }
            onAccept(fd, self)
        }
    }
}

extension EventLoop {
    /// `accept4`, non-blocking and close-on-exec.
    static let systemAccept: @Sendable (Int32) -> Int32 = { listener in
        accept4(listener, nil, nil, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
    }
}

/// The `Date` field's value for the current second, formatted once per second rather than per answer.
final class DateCache: Sendable {
    private let wallClock: @Sendable () -> Date
    private let cached = Mutex<(second: Int64, bytes: [UInt8])>((Int64.min, []))

    init(wallClock: @escaping @Sendable () -> Date) { self.wallClock = wallClock }

    var current: [UInt8] {
        let second = Int64(wallClock().timeIntervalSince1970.rounded(.down))
        return cached.withLock { c in
            if c.second != second { c = (second, HTTPDate.format(secondsSince1970: second)) }
            return c.bytes
        }
    }
}
