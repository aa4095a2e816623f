import Testing
import HTTPTransport

@Suite struct LockedTests {
    /// Increments from many tasks at once all land: the closure runs with the lock held.
    @Test func concurrentUpdatesAreNeverLost() async {
        let counter = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<10_000 { counter.withLock { $0 += 1 } } }
            }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }

    @Test func theClosuresResultAndErrorComeBack() {
        struct Refused: Error {}
        let names = Locked<[String]>([])
        #expect(
            names.withLock {
                $0.append("a"); return $0.count
            } == 1)
        #expect(throws: Refused.self) { try names.withLock { _ in throw Refused() } }
        #expect(names.withLock { $0 } == ["a"])
    }
}
