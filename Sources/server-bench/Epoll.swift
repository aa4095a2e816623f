import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// epoll for the benchmark client, looked up with dlsym: Glibc's Swift module does not export
/// <sys/epoll.h>, and only HTTPEngine may import the C module that does. `add` may be called from any thread (the
/// kernel's epoll_ctl is); `ready` from one thread at a time, since it reads into the instance's buffer.
struct Epoll: @unchecked Sendable {
    private typealias Create = @convention(c) (Int32) -> Int32
    private typealias Control = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    private typealias Wait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32

    /// struct epoll_event is packed on x86-64: a 32-bit mask, then 64 bits of data.
    private static let eventSize = 12
    private let fd: Int32
    private let control: Control
    private let wait: Wait
    private let buffer: UnsafeMutableRawPointer
    private let capacity: Int

    init(capacity: Int = 1_024) {
        func symbol<T>(_ name: String, _ type: T.Type) -> T {
            guard let pointer = dlsym(nil, name) else { fatalError("no \(name)") }
            return unsafeBitCast(pointer, to: type)
        }
        fd = symbol("epoll_create1", Create.self)(0)
        control = symbol("epoll_ctl", Control.self)
        wait = symbol("epoll_wait", Wait.self)
        self.capacity = capacity
        buffer = .allocate(byteCount: capacity * Self.eventSize, alignment: 8)
    }

    /// Watches `socket` for input.
    func add(_ socket: Int32) {
        var event = [UInt8](repeating: 0, count: Self.eventSize)
        event.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt32(1), toByteOffset: 0, as: UInt32.self)  // EPOLLIN
            raw.storeBytes(of: UInt64(UInt32(bitPattern: socket)), toByteOffset: 4, as: UInt64.self)
            _ = control(fd, 1, socket, raw.baseAddress)  // EPOLL_CTL_ADD
        }
    }

    /// The sockets ready to read, waiting up to `timeoutMs`.
    func ready(timeoutMs: Int32) -> [Int32] {
        let n = wait(fd, buffer, Int32(capacity), timeoutMs)
        guard n > 0 else { return [] }
        return (0..<Int(n)).map {
            Int32(truncatingIfNeeded: buffer.loadUnaligned(fromByteOffset: $0 * Self.eventSize + 4, as: UInt64.self))
        }
    }
}
