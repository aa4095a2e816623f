import Foundation

/// Whether the process that started this one is still there: by `getppid()` while it is this process's parent (a pid
/// reused after it ended cannot fool that), by `kill(pid, 0)` otherwise.
struct ParentWatch {
    let pid: Int32
    private let isParent: Bool

    init(pid: Int32, parent: Int32 = getppid()) {
        self.pid = pid
        isParent = parent == pid
    }

    /// True while the process lives; `parent` and `exists` are the system's answers now.
    func isAlive(parent: Int32 = getppid(), exists: (Int32) -> Bool = ParentWatch.exists) -> Bool {
        isParent ? parent == pid : exists(pid)
    }

    /// Whether a process `pid` exists (one of another user's counts too).
    static func exists(_ pid: Int32) -> Bool { kill(pid, 0) == 0 || errno == EPERM }
}
