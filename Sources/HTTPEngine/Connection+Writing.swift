import Foundation
import Synchronization

extension Connection {
    // MARK: - The socket's write side (any thread, under the lock)

    /// Sends `bytes` after whatever is still queued; false once the connection is gone.
    func write(_ bytes: [UInt8], in machine: inout ConnectionStateMachine) -> Bool {
        switch machine.write(bytes) {
        case .gone:
            return false
        case .queued:
            return true
        case .send:
            let sent = bytes.withUnsafeBytes { sendNow($0) }
            guard sent >= 0 else {
                shutDown(&machine)
                return false
            }
            machine.sent(sent, of: bytes)
            return true
        }
    }

    /// What `send` took of `bytes` before the socket filled up; -1 when the peer is gone.
    private func sendNow(_ bytes: UnsafeRawBufferPointer) -> Int {
        var sent = 0
        while sent < bytes.count {
            let n = Glibc.send(fd, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            if n > 0 { sent += n; continue }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK { return sent }
            return -1
        }
        return sent
    }

    /// Offers the socket what is queued.
    private func flush(_ machine: inout ConnectionStateMachine) {
        guard !machine.outbound.isEmpty, machine.isWritable else { return }
        let sent = machine.outbound.withUnsentBytes { sendNow($0) }
        guard sent >= 0 else {
            shutDown(&machine)
            return
        }
        machine.flushed(sent)
    }

    /// No more answers on this connection: once what is queued is out, the write side closes and the client's
    /// remaining bytes are read and dropped until it closes too (or the linger time passes), so that it sees the
    /// last answer rather than a reset.
    func finishWrites(in machine: inout ConnectionStateMachine) {
        if machine.finishWrites(now: server.elapsed()) { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }
    }

    /// Ends the connection abruptly: the loop sees the end and closes it.
    private func shutDown(_ machine: inout ConnectionStateMachine) {
        if machine.shut() { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// Ends the connection abruptly from any thread (a deadline, the cap, a stream that fell behind).
    func cut() { state.withLock { shutDown(&$0) } }

    /// The socket has room (loop thread): what is queued goes out, and the requests that waited for the client to
    /// read are served once it has read half of what waited.
    func writable() {
        let resume = state.withLock { machine -> Bool in
            flush(&machine)
            let drained = machine.socketDrained(now: server.elapsed())
            if drained.closeWriteSide { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }
            return drained.resume
        }
        if resume { drive() }
    }

    /// Bytes queued for the client now, and whether its requests wait for it to read them (for tests).
    var backlog: (bytes: Int, waiting: Bool) { state.withLock { $0.backlog } }

    // MARK: - Streams and WebSockets (any thread)

    /// How a write to a stream or WebSocket went.
    enum StreamWrite { case written, overflow, gone }

    /// Writes to the stream `sink` holds, dropping a client further behind than `limit` bytes.
    func streamWrite(_ sink: StreamSink, _ bytes: [UInt8], limit: Int) -> StreamWrite {
        state.withLock { machine in
            outbound(machine.streamWrite(sink, count: bytes.count, limit: limit), bytes, in: &machine)
        }
    }

    /// Writes to the WebSocket `socket` holds, dropping a client further behind than `limit` bytes.
    func socketWrite(_ socket: UpgradedSocket, _ bytes: [UInt8], limit: Int) -> StreamWrite {
        state.withLock { machine in
            outbound(machine.socketWrite(socket, count: bytes.count, limit: limit), bytes, in: &machine)
        }
    }

    private func outbound(
        _ decision: ConnectionStateMachine.Outbound, _ bytes: [UInt8], in machine: inout ConnectionStateMachine
    ) -> StreamWrite {
        switch decision {
        case .gone:
            return .gone
        case .overflow:
            _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
            return .overflow
        case .write:
            return write(bytes, in: &machine) ? .written : .gone
        }
    }

    /// The WebSocket is done: close once what is queued is out.
    func closeAfterFlush() { state.withLock { finishWrites(in: &$0) } }

    /// Ends the stream `sink` holds: cleanly (the last chunk, then keep-alive) or, `failed`, by cutting the connection.
    func endStream(_ sink: StreamSink, failed: Bool) {
        let now = server.elapsed()
        let wake = state.withLock { machine -> Bool? in
            switch machine.endStream(sink, failed: failed, now: now) {
            case .ignore:
                return nil
            case .cut(let shutDown):
                if shutDown { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
                return nil
            case .ended(let lastChunk, let close):
                if lastChunk { _ = write(Self.lastChunk, in: &machine) }
                if close { finishWrites(in: &machine) }
                return machine.takeWaitingInput()
            }
        }
        guard let wake else { return }
        sink.released()
        if wake { loop.post { [self] in drive() } }
    }

    private static let lastChunk = Array("0\r\n\r\n".utf8)

    // MARK: - The deadline timer and the cap (any thread)

    /// What is due at `now`: a deadline's close or a handler's time-out; a linger that is over is ended here.
    func expire(now: Duration) -> ConnectionDeadlines.Expiry? {
        state.withLock { machine -> ConnectionDeadlines.Expiry? in
            switch machine.due(now: now) {
            case .lingerOver?:
                _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
                return nil
            case .close?: return .close
            case .timeOut?: return .timeOut
            case nil: return nil
            }
        }
    }

    /// This connection's phase, or nil once it is evicted or gone.
    var phase: ConnectionDeadlines.Phase? { state.withLock { $0.phase } }

    /// This connection's deadlines when it may give way to a newcomer over the cap.
    var givingWay: ConnectionDeadlines? { state.withLock { $0.givingWay } }

    /// Evicted for a newcomer over the cap (the registry's lock held).
    func evict() { state.withLock { $0.evict() } }

    /// Accepted over the cap with nobody to give way (the registry's lock held).
    func refuse() { state.withLock { $0.refuse() } }
}
