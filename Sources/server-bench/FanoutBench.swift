import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Fan-out latency against a running `enroute serve`: one ride, thousands of SSE watchers on its
/// events, and a provider posting one fix at a time. For each fix, the time from sending the batch
/// to each watcher reading its `driverMoved`, measured in this process on CLOCK_MONOTONIC.
///
/// The watchers are read by one epoll loop on loopback; the client shares the machine's cores with
/// the server, so the figures include the client's own reading time.
struct FanoutBench {
    let port: UInt16
    let customerToken: String
    let providerToken: String
    let watchers: Int
    let fixes: Int
    let seconds: Double

    init(_ args: BenchArguments) {
        port = UInt16(args.int("port", 18_200))
        customerToken = args.string("customer-token")
        providerToken = args.string("provider-token")
        watchers = args.int("watchers", 10_000)
        fixes = args.int("fixes", 100)
        seconds = args.double("seconds", 120)
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    func run() throws {
        let deadline = Percentiles.now() + seconds
        let control = try Connection(port: port)
        let created = try control.request("POST", "/v1/trips", token: customerToken, headers: ["Idempotency-Key": "fanout-\(getpid())-\(Int(Date().timeIntervalSince1970))"],
                                          body: #"{"pickup":{"lat":60.1699,"lng":24.9384},"dropoff":{"lat":60.1841,"lng":24.9497},"productID":"economy"}"#)
        guard created.status == 201, let tripId = Self.field("id", in: created.body) else { throw Failure(description: "create ride: \(created.status) \(created.body)") }
        let accepted = try control.request("POST", "/v1/provider/trips/\(tripId)/accept", token: providerToken)
        guard accepted.status == 200 else { throw Failure(description: "accept: \(accepted.status) \(accepted.body)") }

        // Open the watchers and wait for each one's opening event.
        let epoll = Epoll()
        var sockets: [Int32] = []
        var seen: [Int] = []
        var tails: [[UInt8]] = []
        var index: [Int32: Int] = [:]
        let request = Array("GET /v1/trips/\(tripId)/events HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\nAuthorization: Bearer \(customerToken)\r\n\r\n".utf8)
        var opened = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)

        /// Reads whatever is ready; returns the watchers that saw `seq` >= `target` for the first time.
        func pump(timeoutMs: Int32, target: Int, onSeen: (Int) -> Void) {
            for fd in epoll.ready(timeoutMs: timeoutMs) {
                guard let w = index[fd] else { continue }
                while true {
                    let got = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if got <= 0 { break }
                    var text = tails[w]
                    text.append(contentsOf: buffer[0..<got])
                    let before = seen[w]
                    let seq = Self.maxSeq(text)
                    if seq > 0 { seen[w] = max(seen[w], seq) } else if seen[w] < 0, text.firstRange(of: Array("data:".utf8)) != nil { seen[w] = 0 }
                    tails[w] = Array(text.suffix(24))
                    if before < target, seen[w] >= target { onSeen(w) }
                    if got < buffer.count { break }
                }
            }
        }

        var ready = Set<Int>()
        while opened < watchers, Percentiles.now() < deadline {
            let chunk = min(500, watchers - opened)
            for _ in 0..<chunk {
                let fd = try Self.connect(port: port)
                _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                epoll.add(fd)
                index[fd] = sockets.count
                sockets.append(fd)
                seen.append(-1)
                tails.append([])
            }
            opened += chunk
            // An opened stream has sent its first event (the trip, with no seq): seq stays 0.
            let chunkEnd = Percentiles.now() + 10
            while ready.count < opened, Percentiles.now() < chunkEnd {
                pump(timeoutMs: 100, target: 0) { ready.insert($0) }
            }
        }
        guard ready.count == watchers else { throw Failure(description: "only \(ready.count) of \(watchers) streams opened") }
        print("fan-out bench: \(watchers) SSE watchers on trip \(tripId), \(fixes) fixes")

        var deliveries: [Double] = []
        var lastWatcher: [Double] = []
        var missed = 0
        let warmup = 3
        let origin = Date()
        for k in 1...(fixes + warmup) where Percentiles.now() < deadline {
            let recorded = ISO8601DateFormatter.string(from: origin.addingTimeInterval(Double(k) * 0.05), timeZone: TimeZone(identifier: "UTC")!,
                                                       formatOptions: [.withInternetDateTime, .withFractionalSeconds])
            let body = #"{"batchId":"f\#(k)","fixes":[{"lat":\#(60.17 + Double(k) * 1e-5),"lng":24.94,"heading":0,"speed":5,"accuracy":5,"recordedAt":"\#(recorded)"}]}"#
            var arrived = 0
            var latencies: [Double] = []
            latencies.reserveCapacity(watchers)
            let t0 = Percentiles.now()
            try control.send("POST", "/v1/provider/locations", token: providerToken, body: body)
            let limit = t0 + 5
            while arrived < watchers, Percentiles.now() < limit {
                pump(timeoutMs: 50, target: k) { _ in
                    arrived += 1
                    latencies.append(Percentiles.now() - t0)
                }
            }
            let response = try control.readResponse()
            guard response.status == 200 else { throw Failure(description: "fix \(k): \(response.status) \(response.body)") }
            if k > warmup {
                deliveries += latencies
                lastWatcher.append(latencies.max() ?? 5)
                missed += watchers - arrived
            }
            // Let the server settle between fixes, as a provider sends every few seconds.
            usleep(20_000)
        }
        for fd in sockets { close(fd) }
        let all = Percentiles(deliveries), last = Percentiles(lastWatcher)
        print(String(format: "fix -> each watcher: %d deliveries  p50 %.2f ms  p99 %.2f ms  max %.2f ms  (missed %d)",
                     deliveries.count, all(50) * 1e3, all(99) * 1e3, all(100) * 1e3, missed))
        print(String(format: "fix -> every watcher (the last one): %d fixes  p50 %.2f ms  p99 %.2f ms", lastWatcher.count, last(50) * 1e3, last(99) * 1e3))
        print(String(format: "ratio p99 (each watcher) / goal 10 ms: %.2f  (<= 1 meets the goal)", all(99) / 0.010))
        print(String(format: "ratio p99 (every watcher) / goal 10 ms: %.2f", last(99) / 0.010))
    }

    /// The largest `"seq":N` in `bytes`, or 0.
    static func maxSeq(_ bytes: [UInt8]) -> Int {
        let key: [UInt8] = Array(#""seq":"#.utf8)
        var best = 0
        var i = 0
        while i + key.count < bytes.count {
            if bytes[i] == key[0], (1..<key.count).allSatisfy({ bytes[i + $0] == key[$0] }) {
                var j = i + key.count, v = 0, digits = 0
                while j < bytes.count, bytes[j] >= 48, bytes[j] <= 57 { v = v * 10 + Int(bytes[j] - 48); j += 1; digits += 1 }
                // A number cut off by the end of the read is not trusted until the rest arrives.
                if digits > 0, j < bytes.count { best = max(best, v) }
                i = j
            } else {
                i += 1
            }
        }
        return best
    }

    /// A string member of a flat JSON object, enough for `"id":"..."`.
    static func field(_ name: String, in json: String) -> String? {
        guard let range = json.range(of: "\"\(name)\":\"") else { return nil }
        return json[range.upperBound...].split(separator: "\"").first.map(String.init)
    }

    static func connect(port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else { close(fd); throw Failure(description: "connect: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    /// One blocking keep-alive HTTP/1.1 connection for the control requests.
    final class Connection {
        let fd: Int32
        private var pending: [UInt8] = []

        init(port: UInt16) throws { fd = try FanoutBench.connect(port: port) }
        deinit { close(fd) }

        func send(_ method: String, _ path: String, token: String, headers: [String: String] = [:], body: String? = nil) throws {
            var head = "\(method) \(path) HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer \(token)\r\n"
            for (k, v) in headers { head += "\(k): \(v)\r\n" }
            let bytes = Array((body ?? "").utf8)
            head += "Content-Type: application/json\r\nContent-Length: \(bytes.count)\r\n\r\n"
            let all = Array(head.utf8) + bytes
            let sent = all.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent == all.count else { throw Failure(description: "send failed") }
        }

        func request(_ method: String, _ path: String, token: String, headers: [String: String] = [:], body: String? = nil) throws -> (status: Int, body: String) {
            try send(method, path, token: token, headers: headers, body: body)
            return try readResponse()
        }

        func readResponse() throws -> (status: Int, body: String) {
            let separator = Array("\r\n\r\n".utf8)
            var buffer = [UInt8](repeating: 0, count: 16_384)
            func fill() throws {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { throw Failure(description: "connection closed") }
                pending += buffer[0..<n]
            }
            while pending.firstRange(of: separator) == nil { try fill() }
            let end = pending.firstRange(of: separator)!
            let head = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
            let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
            var length = 0
            for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
            while pending.count < end.upperBound + length { try fill() }
            let body = String(decoding: pending[end.upperBound..<(end.upperBound + length)], as: UTF8.self)
            pending.removeFirst(end.upperBound + length)
            return (status, body)
        }
    }
}
