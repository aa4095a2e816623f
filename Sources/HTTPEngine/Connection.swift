import Foundation
import Synchronization
import CEpoll

/// One client connection's socket: it drives the connection's two machines and does their I/O. The request reader
/// (`RequestReader`) and the input buffer are the loop's, in `onLoop`; the mode, the request in flight, the bytes not
/// yet sent, the connection's end and its deadlines (`ConnectionStateMachine`) are any thread's, in `state`'s lock.
///
/// Reading, parsing and closing happen on the connection's loop only. Writing may happen on any thread (an async
/// handler's task answering, a channel publishing to a stream) under the lock. The descriptor is closed only on the
/// loop, after the machine is told so under the lock, so no other thread ever writes to a reused number.
final class Connection: @unchecked Sendable {
    /// What the loop's thread alone touches.
    struct LoopState {
        var reader: RequestReader
        /// Bytes read and not used yet: a partial head, or requests that wait while the connection is busy.
        var input: [UInt8] = []
        var readPaused = false
        var closed = false
    }

    /// What follows an answer, done once the lock is let go.
    enum After: Sendable {
        case none
        case stream(StreamSink, EventStream)
        // Boxed: the message stream's size is known only at run time, and would make every answer's copy a
        // runtime call.
        indirect case webSocket(UpgradedSocket, WebSocketSession, AsyncStream<WebSocketMessage>)
    }

    /// An answer written under the lock: what follows it, the status sent and the request it answers, for `finish`.
    struct Answered: Sendable {
        var after: After
        var status: Int
        var context: AnswerContext
    }

    let fd: Int32
    let token: UInt64
    unowned let loop: EventLoop
    let server: ServerCore
    /// Any thread's state, under its lock.
    let state: Mutex<ConnectionStateMachine>
    /// The loop's state: touched on the connection's loop only.
    private var onLoop: LoopState

    /// How long a connection that has been answered for the last time waits for its client to finish sending.
    static let lingerTime: Duration = .seconds(5)

    init(fd: Int32, token: UInt64, loop: EventLoop, server: ServerCore, serial: UInt64, now: Duration) {
        self.fd = fd
        self.token = token
        self.loop = loop
        self.server = server
        state = Mutex(ConnectionStateMachine(serial: serial, now: now, limits: server.connectionLimits))
        onLoop = LoopState(reader: RequestReader(maxHeadBytes: server.configuration.maxHeadBytes))
    }

    // MARK: - Events (loop thread)

    func handle(events: UInt32) {
        if events & EPOLLOUT.rawValue != 0 { writable() }
        if events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
            readable(toTheEnd: events & (EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0)
        }
    }

    /// Reads what the socket holds. A short read means it is drained (a later arrival brings a new edge), unless the
    /// peer has also hung up, when it reads on to see the end.
    private func readable(toTheEnd: Bool) {
        let scratch = loop.scratch
        while !onLoop.closed, !onLoop.readPaused {
            let n = recv(fd, scratch.baseAddress, scratch.count, 0)
            if n > 0 {
                received(UnsafeRawBufferPointer(rebasing: scratch[0..<n]))
                if n < scratch.count, !toTheEnd { return }
                continue
            }
            if n == 0 { closeNow(); return }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return
            default: closeNow(); return
            }
        }
    }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        let now = loop.now, buffered = onLoop.input.count
        switch state.withLock({ $0.bytesRead(bytes.count, buffered: buffered, now: now) }) {
        case .drop:
            return
        case .hold(let room, let pauseReading):
            if room > 0 { onLoop.input.append(contentsOf: bytes.prefix(room)) }
            if pauseReading { onLoop.readPaused = true }
        case .feed(let socket):
            socket.feed(Array(bytes))
        case .serve:
            if onLoop.input.isEmpty {
                let used = serve(bytes)
                if used < bytes.count { keepLeftover(UnsafeRawBufferPointer(rebasing: bytes[used...])) }
            } else {
                onLoop.input.append(contentsOf: bytes)
                serveBuffered()
            }
        }
    }

    /// Serves what waits in the input buffer, and reads again if reading had stopped (loop thread).
    func drive() {
        guard !onLoop.closed else { return }
        let resume: Bool
        switch state.withLock({ $0.inputTurn() }) {
        case .feed(let socket, let resumeReading):
            if !onLoop.input.isEmpty {
                let bytes = onLoop.input
                onLoop.input = []
                socket.feed(bytes)
            }
            resume = resumeReading
        case .wait:
            return
        case .serve:
            if !onLoop.input.isEmpty { serveBuffered() }
            resume = true
        }
        if onLoop.readPaused, resume {
            onLoop.readPaused = false
            readable(toTheEnd: true)
        }
    }

    private func serveBuffered() {
        // Taken out while it is served, so that no access to the loop's state spans the requests it holds.
        var input = onLoop.input
        onLoop.input = []
        let used = input.withUnsafeBytes { serve($0) }
        if !onLoop.closed, used < input.count {
            input.removeFirst(used)
            onLoop.input = input
        }
        handOverLeftover()
    }

    private func keepLeftover(_ bytes: UnsafeRawBufferPointer) {
        onLoop.input.append(contentsOf: bytes)
        handOverLeftover()
    }

    /// Bytes after an upgrade's head belong to the WebSocket.
    private func handOverLeftover() {
        guard !onLoop.input.isEmpty, let socket = state.withLock({ $0.upgradedSocket }) else { return }
        let bytes = onLoop.input
        onLoop.input = []
        socket.feed(bytes)
    }

    // MARK: - Requests (loop thread)

    /// Parses and answers requests from `input` while the connection can take them; returns the bytes used.
    private func serve(_ input: UnsafeRawBufferPointer) -> Int {
        var offset = 0
        onLoop.reader.startTurn()
        while true {
            let (event, used) = onLoop.reader.read(UnsafeRawBufferPointer(rebasing: input[offset...]))
            offset += used
            switch event {
            case .needMore(let requestLine):
                if requestLine {
                    let now = loop.now
                    state.withLock { $0.requestLineReceived(now: now) }
                }
                return offset
            case .yield:
                loop.serveLater(self)
                return offset
            case .unreadable(let status):
                // A request that cannot be read is answered with its problem and the connection closes.
                answer(HTTPError.protocolError(status: status).response, .unreadable(started: .now))
                return input.count
            case .overflow:
                closeNow()
                return input.count
            case .head(let head):
                switch begin(head) {
                case .refuse(let response, let context):
                    answer(response, context)
                    return input.count
                case .body(let sendContinue):
                    if sendContinue { state.withLock { _ = write(ResponseHead.continueLine, in: &$0) } }
                case .request(let request):
                    guard complete(request, more: offset < input.count) else { return offset }
                }
            case .request(let request):
                guard complete(request, more: offset < input.count) else { return offset }
            }
        }
    }

    /// A complete head: the machine learns of it, and the reader checks it and sets up reading its body.
    private func begin(_ head: RequestHead) -> RequestReader.Begin {
        let started = RequestStart.now, now = loop.now
        let refused = state.withLock { $0.headersReceived(now: now) }
        // The registry's lock is taken without the connection's: the registry takes connections' locks under its own.
        let refusedAtCap = refused && server.openConnectionCount > server.budget.connectionCap
        return onLoop.reader.begin(head, refusedAtCap: refusedAtCap, router: server.router, started: started)
    }

    /// The request is in: dispatches it. True when the connection can take the next request at once; otherwise input
    /// after it (`more`) waits for the loop to be told.
    private func complete(_ request: ReadRequest, more: Bool) -> Bool {
        dispatch(request)
        return state.withLock { $0.requestDispatched(more: more) }
    }

    // MARK: - Closing (loop thread)

    /// Closes the socket and lets go of everything the connection held.
    func closeNow() {
        guard !onLoop.closed else { return }
        onLoop.closed = true
        let (mode, task, wasEvicted) = state.withLock { $0.closed() }
        Glibc.close(fd)
        onLoop.input = []
        onLoop.reader.reset()
        loop.release(token: token)
        server.connectionClosed(self, wasEvicted: wasEvicted)
        task?.cancel()
        switch mode {
        case .http: break
        case .stream(let sink, _, _): sink.released()
        case .webSocket(let socket): socket.connectionClosed()
        }
    }
}
