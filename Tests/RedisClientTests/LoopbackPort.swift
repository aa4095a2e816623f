import Testing
import Glibc

/// A TCP socket bound to an ephemeral loopback port, held for the test's life so no one else takes the port:
/// unlistened, a connection to it is refused; listening but never accepting, it takes connections and never answers.
final class LoopbackPort {
    let descriptor: Int32
    let port: Int

    init(listening: Bool) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0)
        if listening {
            try #require(listen(descriptor, 16) == 0)
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    private var accepted: [Int32] = []

    /// Accepts a waiting connection without blocking; true if there was one.
    func acceptOne() -> Bool {
        let fd = accept(descriptor, nil, nil)
        if fd >= 0 {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            accepted.append(fd)
        }
        return fd >= 0
    }

    /// True once the last accepted connection has sent something (without blocking).
    func acceptedHasSent() -> Bool {
        guard let fd = accepted.last else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) > 0
    }

    /// Everything the last accepted connection has sent so far (without blocking).
    func acceptedBytes() -> [UInt8] {
        guard let fd = accepted.last else { return [] }
        var bytes: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            guard n > 0 else { return bytes }
            bytes += chunk[..<n]
        }
    }

    deinit {
        accepted.forEach { close($0) }
        close(descriptor)
    }
}
