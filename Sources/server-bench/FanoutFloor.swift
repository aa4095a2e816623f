import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The floor for the fan-out benchmark: the least any server must do to fan one event out over
/// SSE. `GET /sub` gets chunked SSE headers and is kept; `POST /pub` frames its body once as an
/// SSE event in one HTTP/1.1 chunk and `send()`s it to every kept socket from `--threads` threads,
/// then answers 202. No routing, no auth, no JSON, no storage: only the system calls.
struct FanoutFloor {
    let port: UInt16
    let threads: Int

    init(_ args: BenchArguments) {
        port = UInt16(args.int("port", 18_212))
        threads = max(1, args.int("threads", ProcessInfo.processInfo.activeProcessorCount))
    }

    /// The open streams. A watcher that hangs up is closed and dropped by a thread of its own (its socket turns
    /// readable at the end of the stream), so that rounds after the first find the descriptors free.
    final class Subscribers: @unchecked Sendable {
        private let lock = NSLock()
        private var fds: Set<Int32> = []
        private var listed: [Int32]?
        private let hangups = Epoll()

        init() {
            let hangups = self.hangups
            Thread.detachNewThread { [weak self] in
                while let self {
                    for fd in hangups.ready(timeoutMs: 1_000) { self.drop(fd) }
                }
            }
        }

        func add(_ fd: Int32) {
            lock.lock(); fds.insert(fd); listed = nil; lock.unlock()
            hangups.add(fd)
        }

        var all: [Int32] {
            lock.lock(); defer { lock.unlock() }
            if let listed { return listed }
            let list = Array(fds)
            listed = list
            return list
        }

        private func drop(_ fd: Int32) {
            lock.lock(); let known = fds.remove(fd) != nil; listed = nil; lock.unlock()
            if known { close(fd) }
        }
    }

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 4_096) == 0 else {
            throw FanoutBench.Failure(description: "cannot listen on \(port)")
        }
        print("fan-out floor listening on \(port)")
        fflush(nil)
        let subscribers = Subscribers()
        let threads = self.threads
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { continue }
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            // Off the accept loop: the publisher's connection sends its first request only later.
            DispatchQueue.global().async { Self.serve(fd, subscribers: subscribers, threads: threads) }
        }
    }

    /// A subscriber is kept; the publisher's requests are served one after another until it leaves.
    static func serve(_ fd: Int32, subscribers: Subscribers, threads: Int) {
        var reader = RequestReader(fd: fd)
        guard let first = reader.next() else { close(fd); return }
        if first.path == "/sub" {
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nTransfer-Encoding: "
                + "chunked\r\n\r\n"
            let bytes = Array(head.utf8) + chunk(Array("retry: 3000\n\n".utf8))
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            subscribers.add(fd)
            return
        }
        var request: RequestReader.Request? = first
        var id = 0
        while let current = request {
            id += 1
            broadcast(
                chunk(Array("id: \(id)\ndata: ".utf8) + current.body + Array("\n\n".utf8)), to: subscribers.all,
                threads: threads)
            let answer = Array("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".utf8)
            _ = answer.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            request = reader.next()
        }
        close(fd)
    }

    static func broadcast(_ frame: [UInt8], to fds: [Int32], threads: Int) {
        let parts = fds.count >= 512 ? threads : 1
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            frame.withUnsafeBytes { raw in
                var i = part
                while i < fds.count {
                    _ = send(fds[i], raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                    i += parts
                }
            }
        }
    }

    static func chunk(_ bytes: [UInt8]) -> [UInt8] {
        Array(String(bytes.count, radix: 16).utf8) + [13, 10] + bytes + [13, 10]
    }

    /// Blocking reads of HTTP/1.1 requests with a Content-Length body, one after another.
    struct RequestReader {
        struct Request { let path: String; let body: [UInt8] }
        let fd: Int32
        var pending: [UInt8] = []

        init(fd: Int32) { self.fd = fd }

        mutating func next() -> Request? {
            let separator: [UInt8] = [13, 10, 13, 10]
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while pending.firstRange(of: separator) == nil {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { return nil }
                pending += buffer[0..<n]
            }
            let end = pending.firstRange(of: separator)!
            let head = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
            let path = head.split(separator: " ").dropFirst().first.map(String.init) ?? ""
            var length = 0
            for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
            while pending.count < end.upperBound + length {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { return nil }
                pending += buffer[0..<n]
            }
            let body = Array(pending[end.upperBound..<(end.upperBound + length)])
            pending.removeFirst(end.upperBound + length)
            return Request(path: path, body: body)
        }
    }
}
