import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Signals as values in a stream instead of their default action: a handler writes the signal's number to a pipe
/// (`write` is safe in a handler) and a thread of its own reads it and yields it to whoever asked. libdispatch's
/// signal sources lose a process-directed signal on Linux: once `dispatch_main` runs, the main thread waits in
/// `sigsuspend` with every signal unblocked, the signal is delivered there, and the source's `signalfd` never sees it.
enum SignalCatcher {
    private static let listeners = Mutex<[Int32: [AsyncStream<Int32>.Continuation]]>([:])
    private static let pipeOpened = Mutex(false)

    /// From now on, `signals` go to `continuation` (and to any other listener of the same signal) for the rest of the
    /// process. Without a pipe (no descriptors left) the signals keep their default action.
    static func start(_ signals: [Int32], into continuation: AsyncStream<Int32>.Continuation) {
        guard openPipe() else { return }
        listeners.withLock { all in
            for sig in signals { all[sig, default: []].append(continuation) }
        }
        for sig in signals { signal(sig, forwardSignal) }
    }

    /// The pipe and its reader, once per process; false when the pipe could not be made.
    private static func openPipe() -> Bool {
        pipeOpened.withLock { opened in
            if opened { return true }
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { return false }
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            signalPipe = fds[1]
            let reader = fds[0]
            let thread = Thread {
                var byte: UInt8 = 0
                while true {
                    let n = read(reader, &byte, 1)
                    if n == 1 {
                        let sig = Int32(byte)
                        for listener in listeners.withLock({ $0[sig] ?? [] }) { listener.yield(sig) }
                    } else if n < 0, errno == EINTR {
                        continue
                    } else {
                        return
                    }
                }
            }
            thread.name = "signals"
            thread.start()
            opened = true
            return true
        }
    }
}

/// The pipe's writing end, set once before any handler is installed.
nonisolated(unsafe) private var signalPipe: Int32 = -1

/// The handler: the signal's number into the pipe, nothing else.
private let forwardSignal: @convention(c) (Int32) -> Void = { sig in
    var byte = UInt8(truncatingIfNeeded: sig)
    _ = write(signalPipe, &byte, 1)
}
