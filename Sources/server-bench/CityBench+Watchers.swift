import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension CityBench {
    /// The SSE watchers on one epoll: each `driverMoved` is timed against its fix's `timestamp`.
    final class Watchers {
        private let epoll: Epoll
        private var byFD: [Int32] = []
        private var pending: [[UInt8]] = []
        private var isOpen: [Bool] = []
        private(set) var sockets: [Int32] = []
        private(set) var opened = 0
        private(set) var closed = 0
        /// Fix → receipt, ms, for fixes recorded inside the counted window.
        private(set) var latencies: [Double] = []
        private var buffer = [UInt8](repeating: 0, count: 65_536)
        /// The first deliveries over 50 ms: read time (wall ms), latency (ms), watcher.
        private(set) var slow: [(Double, Double, Int)] = []
        var count: Int { sockets.count }

        init(capacity: Int) {
            epoll = Epoll(capacity: 4_096)
            pending.reserveCapacity(capacity)
            latencies.reserveCapacity(capacity * 16)
        }

        deinit { for fd in sockets { Glibc.close(fd) } }

        func open(port: UInt16, trip: Int, request: String) throws {
            let fd = try FanoutBench.connect(port: port)
            let bytes = Array(request.utf8)
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if Int(fd) >= byFD.count { byFD += [Int32](repeating: -1, count: Int(fd) + 1 - byFD.count + 1_024) }
            byFD[Int(fd)] = Int32(sockets.count)
            epoll.add(fd)
            sockets.append(fd)
            pending.append([])
            isOpen.append(false)
        }

        /// Reads whatever is ready. With a window (recordedAt in ms since 1970), times the driverMoved events in it.
        func pump(timeoutMs: Int32, window: (Double, Double)?, wallOffset: Double = 0) {
            for fd in epoll.ready(timeoutMs: timeoutMs) {
                let w = Int(fd) < byFD.count ? Int(byFD[Int(fd)]) : -1
                guard w >= 0 else { continue }
                while true {
                    let got = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR) {
                        closed += 1
                        byFD[Int(fd)] = -1
                        Glibc.close(fd)
                        break
                    }
                    if got < 0 { break }
                    let readAt = (Percentiles.now() + wallOffset) * 1000
                    pending[w] += buffer[0..<got]
                    if !isOpen[w], pending[w].firstRange(of: Self.data) != nil { isOpen[w] = true; opened += 1 }
                    // Whole events end with a blank line; the rest waits for the next read.
                    var consumed = 0
                    pending[w].withUnsafeBufferPointer { bytes in
                        var start = 0
                        while let end = Self.find(Self.blank, in: bytes, from: start) {
                            if let window, let at = Self.movedAt(bytes[start..<end]), at >= window.0, at <= window.1 {
                                latencies.append(readAt - at)
                                if readAt - at > 50, slow.count < 100_000 { slow.append((readAt, readAt - at, w)) }
                            }
                            start = end + 2
                        }
                        consumed = start
                    }
                    if consumed > 0 { pending[w].removeFirst(consumed) }
                    if got < buffer.count { break }
                }
            }
        }

        static let data = Array("data:".utf8), blank = Array("\n\n".utf8)
        static let moved = Array("event: driverMoved".utf8), stamp = Array(#""timestamp":""#.utf8)

        static func find(_ needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from: Int, to: Int? = nil) -> Int? {
            let end = (to ?? bytes.count) - needle.count
            guard from <= end else { return nil }
            var i = from
            while i <= end {
                if bytes[i] == needle[0] {
                    var j = 1
                    while j < needle.count, bytes[i + j] == needle[j] { j += 1 }
                    if j == needle.count { return i }
                }
                i += 1
            }
            return nil
        }

        /// The fix time (ms since 1970) of a `driverMoved` event, nil for any other event.
        static func movedAt(_ event: Slice<UnsafeBufferPointer<UInt8>>) -> Double? {
            let base = event.base
            guard find(moved, in: base, from: event.startIndex, to: event.endIndex) != nil,
                let at = find(stamp, in: base, from: event.startIndex, to: event.endIndex)
            else { return nil }
            return parseTime(base, at + stamp.count, event.endIndex)
        }

        /// `YYYY-MM-DDTHH:MM:SS[.mmm]Z` at `i` as ms since 1970.
        static func parseTime(_ b: UnsafeBufferPointer<UInt8>, _ i: Int, _ end: Int) -> Double? {
            guard i + 20 <= end else { return nil }
            func num(_ at: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 * 10 + Int(b[at + $1]) - 48 } }
            let y = num(i, 4), m = num(i + 5, 2), d = num(i + 8, 2)
            let secs = num(i + 11, 2) * 3600 + num(i + 14, 2) * 60 + num(i + 17, 2)
            var ms = 0
            if b[i + 19] == UInt8(ascii: "."), i + 23 <= end { ms = num(i + 20, 3) }
            // Days from the civil date (proleptic Gregorian).
            let yy = m <= 2 ? y - 1 : y
            let era = yy / 400, yoe = yy - era * 400
            let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
            let days = era * 146_097 + (yoe * 365 + yoe / 4 - yoe / 100 + doy) - 719_468
            return Double(days * 86_400 + secs) * 1000 + Double(ms)
        }
    }
}
