import Foundation
import Synchronization
import Testing
@testable import HTTPEngine
import CMicroHTTPD
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The reactor's registrations: an event fetched for a socket that is gone never reaches the next
/// socket given the same descriptor number (the number is reused by any socket in the process).
@Suite struct SocketReactorTests {
    final class Probe: ReactorSocket, @unchecked Sendable {
        let fd: Int32
        let calls = Mutex<[String]>([])
        init(fd: Int32) { self.fd = fd }
        func readable(buffer: inout [UInt8]) { calls.withLock { $0.append("readable") } }
        func writable() { calls.withLock { $0.append("writable") } }
        var seen: [String] { calls.withLock { $0 } }
    }

    /// A connected pair that stays quiet: no event of its own reaches the reactor's loop.
    static func quietPair() -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        return (fds[0], fds[1])
    }

    @Test func anEventForARemovedSocketDoesNotReachTheNextHolderOfItsNumber() throws {
        let reactor = SocketReactor()
        defer { reactor.stop() }
        let (fd, peer) = Self.quietPair()
        defer { close(fd); close(peer) }
        let gone = Probe(fd: fd), next = Probe(fd: fd)
        reactor.add(gone, input: false)
        let stale = try #require(reactor.token(of: gone))
        reactor.remove(gone)
        reactor.add(next, input: false)
        let current = try #require(reactor.token(of: next))
        #expect(current != stale)

        var buffer = [UInt8](repeating: 0, count: 16)
        reactor.dispatch(token: stale, events: EPOLLHUP.rawValue | EPOLLOUT.rawValue, buffer: &buffer)
        #expect(next.seen.isEmpty && gone.seen.isEmpty)
        reactor.dispatch(token: current, events: EPOLLHUP.rawValue | EPOLLOUT.rawValue, buffer: &buffer)
        #expect(next.seen == ["writable", "readable"])
    }

    /// A server stopped by `shutdown()` and then dropped stops its reactor twice; the second call once wrote its 8-byte
    /// wake-up into a descriptor the loop had closed, by then a client's socket (`\u{01}\0\0\0\0\0\0\0` in an SSE stream).
    @Test func aReactorStoppedTwiceWakesOnceAndKeepsItsDescriptorsUntilItIsGone() async throws {
        var reactor: SocketReactor? = SocketReactor()
        let wake = try #require(reactor?.wakeDescriptor)
        reactor?.stop()
        try await eventually("the loop ends", within: .seconds(30)) { reactor?.hasEnded == true }
        #expect(fcntl(wake, F_GETFD) != -1, "the wake-up's descriptor is still the reactor's")
        var value: UInt64 = 0
        _ = read(wake, &value, 8)   // the first wake-up, if the loop ended before reading it
        reactor?.stop()
        #expect(read(wake, &value, 8) == -1 && errno == EAGAIN, "the second stop wrote a wake-up")
        reactor = nil
        #expect(fcntl(wake, F_GETFD) == -1, "closed with the reactor")
    }

    @Test func removingASocketThatWasReplacedLeavesItsSuccessorRegistered() throws {
        let reactor = SocketReactor()
        defer { reactor.stop() }
        let (fd, peer) = Self.quietPair()
        defer { close(fd); close(peer) }
        let first = Probe(fd: fd), second = Probe(fd: fd)
        reactor.add(first, input: false)
        reactor.add(second, input: false)
        reactor.remove(first)
        #expect(reactor.token(of: first) == nil)
        #expect(reactor.token(of: second) != nil)
    }
}
