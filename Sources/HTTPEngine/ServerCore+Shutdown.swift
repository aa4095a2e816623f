import Foundation
import Synchronization

extension ServerCore {
    /// Stops the loops without the shutdown's grace (the server was dropped): every connection is closed as it is.
    func abandon() {
        timer?.cancel()
        guard !loops.isEmpty, !draining.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopped.store(true, ordering: .releasing)
        for loop in loops {
            loop.stopListening {}
            loop.stop()
        }
        let last = ContinuousClock.now.advanced(by: .seconds(3))
        while loops.contains(where: { !$0.hasEnded }), ContinuousClock.now < last { usleep(1_000) }
        if listener >= 0 { close(listener) }
        listener = -1
    }

    /// Stops accepting, lets in-flight requests finish, ends streams cleanly, then stops the loops.
    func shutdown() async {
        guard !loops.isEmpty, !draining.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // The listener is closed once no loop polls it any more.
        await withTaskGroup(of: Void.self) { group in
            for loop in loops {
                group.addTask { await withCheckedContinuation { done in loop.stopListening { done.resume() } } }
            }
        }
        if listener >= 0 { close(listener) }
        listener = -1
        for sink in streams.withLock({ Array($0.values) }) { sink.finish() }
        for socket in sockets.withLock({ Array($0.values) }) {
            socket.close(code: WebSocketCloseCode.goingAway, reason: "server shutting down")
        }
        let deadline = ContinuousClock.now.advanced(by: configuration.shutdownGrace)
        while ContinuousClock.now < deadline,
            inFlight.load(ordering: .acquiring) > 0 || openStreams.load(ordering: .acquiring) > 0
                || webSockets.load(ordering: .acquiring) > 0
        {
            try? await Task.sleep(for: .milliseconds(10))
        }
        // Past the grace period whatever still runs is answered or ended now: a handler still running gets the 503 its
        // deadline would give, a stream its end.
        let unavailable = HTTPError.unavailable(retryAfterSeconds: 1, detail: "The server is shutting down.").response
        for connection in registry.withLock({ $0.connections }) where connection.hasRequestInFlight {
            connection.timeOut(unavailable)
        }
        for sink in streams.withLock({ Array($0.values) }) { sink.abandon() }
        // The loops close what is left (kept-alive connections, sockets that did not finish) and end.
        stopped.store(true, ordering: .releasing)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let resumeNow = loopsEnded.withLock { state -> Bool in
                if state.count == loops.count { return true }
                state.waiters.append(done)
                return false
            }
            if resumeNow { done.resume() }
            for loop in loops { loop.stop() }
        }
        timer?.cancel()
    }

    /// A loop has ended: once the last one has, the shutdown waiting for them goes on.
    func loopEnded() {
        let waiters = loopsEnded.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count += 1
            guard state.count == loops.count else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
