import Foundation
import Synchronization
import Testing
import TestSupport
@testable import HTTPEngine

/// The loop's registrations: an event fetched for a connection that is gone never reaches the next one given its slot
/// (or its descriptor number, which any socket in the process may reuse).
@Suite struct EventLoopTests {
    func makeSUT() -> EventLoop {
        EventLoop(
            index: 0, elapsed: { .zero }, dates: DateCache(wallClock: { Date(timeIntervalSince1970: 0) }),
            onAccept: { fd, _ in close(fd) })
    }

    @Test func theDefaultLoopsLeaveOneCoreToTheRestOfTheProcess() {
        #expect(HTTPServerConfiguration.defaultThreads(cores: 1) == 1)
        #expect(HTTPServerConfiguration.defaultThreads(cores: 2) == 1)
        #expect(HTTPServerConfiguration.defaultThreads(cores: 8) == 7)
        #expect(
            HTTPServerConfiguration.defaultThreads(cores: 0) == 1, "a machine that reports no cores still gets a loop")
    }

    @Test func anEventForAReleasedSlotDoesNotReachItsNextHolder() {
        let loop = makeSUT()
        let core = ServerCore(
            router: Router(), configuration: HTTPServerConfiguration(), metrics: MetricsRegistry(),
            clock: ContinuousClock(), wallClock: { Date() },
            budget: DescriptorBudget(descriptorLimit: 1024, requestedCap: 100),
            accept: EventLoop.systemAccept)
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        var made: [(token: UInt64, connection: Connection)] = []
        for serial in UInt64(1)...2 {
            loop.adopt(fds[0]) { token in
                let connection = Connection(
                    fd: fds[0], token: token, loop: loop, server: core, serial: serial, now: .zero)
                made.append((token, connection))
                return connection
            }
            if serial == 1 { loop.release(token: made[0].token) }  // as a close gives the slot back
        }
        #expect(made[0].token & 0xFFFF_FFFF == made[1].token & 0xFFFF_FFFF, "the slot is reused")
        #expect(made[0].token != made[1].token)
        #expect(loop.connection(for: made[0].token) == nil)
        #expect(loop.connection(for: made[1].token) === made[1].connection)
        loop.dispatch(token: made[0].token, events: 0xFFFF)  // a stale event: nobody hears it
        #expect(made[1].connection.phase == .head)
        loop.release(token: made[1].token)
    }

    @Test func aLoopStoppedTwiceEndsOnceAndKeepsItsDescriptorsUntilItIsGone() async throws {
        var loop: EventLoop? = makeSUT()
        let ended = Mutex(0)
        loop?.start(name: "test-loop") { ended.withLock { $0 += 1 } }
        let wake = try #require(loop?.wakeDescriptor)
        loop?.stop()
        loop?.stop()
        try await eventually("the loop ends", within: .seconds(30)) { loop?.hasEnded == true }
        #expect(ended.withLock { $0 } == 1)
        #expect(fcntl(wake, F_GETFD) != -1, "the wake-up's descriptor is still the loop's")
        loop = nil
        #expect(fcntl(wake, F_GETFD) == -1, "closed with the loop")
    }

    @Test(
        arguments: [
            (EMFILE, AcceptFailure.exhausted), (ENFILE, .exhausted), (ENOBUFS, .exhausted), (ENOMEM, .exhausted),
            (EAGAIN, .drained), (EBADF, .drained), (EINTR, .retry), (ECONNABORTED, .retry), (EPROTO, .retry),
        ] as [(Int32, AcceptFailure)])
    func anAcceptThatFailsForWantOfDescriptorsStopsPollingTheListener(code: Int32, failure: AcceptFailure) {
        #expect(AcceptFailure(errno: code) == failure)
    }
}
