import Foundation
import Testing
@testable import enroute

/// `enroute serve --parent-pid`: the starter is gone once this process has another parent, or, when it was never the
/// parent, once no process has its pid.
@Suite struct ParentWatchTests {
    @Test func aParentIsGoneOnceThisProcessHasAnother() {
        let watch = ParentWatch(pid: 4242, parent: 4242)
        #expect(
            watch.isAlive(parent: 4242) { _ in
                Issue.record("a parent is told by getppid"); return false
            })
        #expect(!watch.isAlive(parent: 1) { _ in true }, "reparented: the parent ended, whoever holds its pid now")
    }

    @Test func anotherProcessIsGoneOnceNoProcessHasItsPid() {
        let watch = ParentWatch(pid: 4242, parent: 17)
        #expect(watch.isAlive(parent: 17) { $0 == 4242 })
        #expect(!watch.isAlive(parent: 17) { _ in false })
    }

    @Test func thisProcessExistsAndAnUnusedPidDoesNot() {
        #expect(ParentWatch.exists(getpid()))
        #expect(!ParentWatch.exists(Int32.max))
    }
}
