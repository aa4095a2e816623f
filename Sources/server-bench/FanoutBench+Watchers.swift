import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension FanoutBench {
    /// The SSE watchers on one epoll, each read for the largest `"seq":N` it has seen (-1 before its stream opened,
    /// 0 once it has).
    final class Watchers {
        private let epoll = Epoll(capacity: 4_096)
        private var sockets: [Int32] = []
        /// fd -> watcher index, -1 for none.
        private var byFD: [Int32] = []
        private var seen: [Int] = []
        /// The last bytes of each watcher's previous read, so a number split across reads is whole.
        private static let tailSize = 24
        private var tails: [UInt8]
        private var tailCounts: [Int]
        private var buffer = [UInt8](repeating: 0, count: 65_536 + Watchers.tailSize)

        init(count: Int) {
            tails = [UInt8](repeating: 0, count: count * Self.tailSize)
            tailCounts = [Int](repeating: 0, count: count)
        }

        /// Connects one more watcher and sends its request.
        func open(port: UInt16, request: [UInt8]) throws {
            let fd = try FanoutBench.connect(port: port)
            _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if Int(fd) >= byFD.count { byFD += [Int32](repeating: -1, count: Int(fd) + 1 - byFD.count + 1_024) }
            byFD[Int(fd)] = Int32(sockets.count)
            epoll.add(fd)
            sockets.append(fd)
            seen.append(-1)
        }

        /// Reads whatever is ready; calls `onSeen` for each watcher that reaches `target` now.
        func pump(timeoutMs: Int32, target: Int, onSeen: (Int) -> Void) {
            let tailSize = Self.tailSize
            for fd in epoll.ready(timeoutMs: timeoutMs) {
                let w = Int(fd) < byFD.count ? Int(byFD[Int(fd)]) : -1
                guard w >= 0 else { continue }
                while true {
                    // The last bytes of the previous read go first, so a number split across reads is whole.
                    let carried = tailCounts[w]
                    let got: Int = buffer.withUnsafeMutableBytes { raw in
                        tails.withUnsafeBytes { t in
                            raw.baseAddress!.copyMemory(from: t.baseAddress! + w * tailSize, byteCount: carried)
                        }
                        return recv(fd, raw.baseAddress! + carried, 65_536, 0)
                    }
                    if got <= 0 { break }
                    let total = carried + got
                    let before = seen[w]
                    let seq = buffer.withUnsafeBufferPointer { FanoutBench.maxSeq($0[0..<total]) }
                    if seq > 0 { seen[w] = max(seen[w], seq) } else if seen[w] < 0 { seen[w] = 0 }
                    let keep = min(tailSize, total)
                    buffer.withUnsafeBytes { raw in
                        tails.withUnsafeMutableBytes { t in
                            (t.baseAddress! + w * tailSize).copyMemory(
                                from: raw.baseAddress! + total - keep, byteCount: keep)
                        }
                    }
                    tailCounts[w] = keep
                    if before < target, seen[w] >= target { onSeen(w) }
                    if got < 65_536 { break }
                }
            }
        }

        /// Closes every watcher's socket.
        func closeAll() {
            for fd in sockets { close(fd) }
        }
    }
}
