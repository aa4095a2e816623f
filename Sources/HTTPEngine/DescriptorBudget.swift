import Foundation

/// How the process's file descriptors are shared between client connections and everything else, pure: the cap on
/// connections sits below the descriptor limit, so the cap's eviction and 503 happen before `accept` runs out.
///
/// Of `descriptorLimit`, a reserve stays for the rest of the process (databases, logs, upload files, outgoing
/// connections) and for the newcomers accepted over the cap only to be told 503: half the limit, at most 512.
public struct DescriptorBudget: Sendable, Equatable {
    /// Open client connections beyond this make others give way, or get 503.
    public let connectionCap: Int
    /// Connections accepted over the cap to be answered 503 (rather than left waiting in the backlog).
    public let refusalHeadroom: Int
    /// Descriptors left for the rest of the process, the refusal headroom included.
    public let reserve: Int

    /// The budget for a process that may open `descriptorLimit` descriptors, asked for `requestedCap` connections.
    public init(descriptorLimit: Int, requestedCap: Int) {
        let limit = max(descriptorLimit, 2)
        reserve = min(limit / 2, 512)
        connectionCap = max(1, min(requestedCap, limit - reserve))
        refusalHeadroom = min(256, reserve / 2)
    }

    /// The soft limit to raise to from `soft`, given the `hard` one (nil: unlimited): the hard limit, or, when that is
    /// unlimited, the most the kernel lets one process open (`nrOpen`), never lower than `soft`.
    public static func raisedSoftLimit(soft: UInt64, hard: UInt64?, nrOpen: UInt64) -> UInt64 {
        max(soft, hard ?? nrOpen)
    }
}

/// The process's descriptor limit (RLIMIT_NOFILE).
public enum DescriptorLimit {
    /// The soft limit now.
    public static var current: Int {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        return limit.rlim_cur == Self.unlimited ? Int.max : Int(clamping: limit.rlim_cur)
    }

    /// Raises the soft limit to the hard one (`DescriptorBudget.raisedSoftLimit`); returns the limit before and after.
    @discardableResult
    public static func raiseToHard() -> (before: Int, after: Int) {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return (current, current) }
        let before = Int(clamping: limit.rlim_cur)
        let nrOpen =
            (try? String(contentsOfFile: "/proc/sys/fs/nr_open", encoding: .utf8))
            .flatMap { UInt64($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 1 << 20
        let hard = limit.rlim_max == Self.unlimited ? nil : UInt64(limit.rlim_max)
        let target = DescriptorBudget.raisedSoftLimit(soft: UInt64(limit.rlim_cur), hard: hard, nrOpen: nrOpen)
        guard target > limit.rlim_cur else { return (before, before) }
        var raised = limit
        raised.rlim_cur = rlim_t(target)
        guard setrlimit(resource, &raised) == 0 else { return (before, before) }
        return (before, current)
    }

    /// RLIM_INFINITY (all ones), which Swift cannot import as a literal.
    private static let unlimited = rlim_t.max

    private static var resource: __rlimit_resource_t { __rlimit_resource_t(RLIMIT_NOFILE.rawValue) }
}
