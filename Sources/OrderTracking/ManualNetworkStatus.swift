/// A `NetworkStatus` the owner sets by hand: a command-line tool's own guess, or a test's.
@MainActor
public final class ManualNetworkStatus: NetworkStatus {
    /// The reachability last set.
    public private(set) var isOnline: Bool
    private var handlers: [@MainActor (Bool) -> Void] = []

    /// Starts online unless told otherwise.
    public init(isOnline: Bool = true) { self.isOnline = isOnline }

    /// Adds an observer; it lives as long as this object.
    public func observe(_ handler: @escaping @MainActor (Bool) -> Void) { handlers.append(handler) }

    /// Sets reachability and tells every observer, if it changed.
    public func set(online: Bool) {
        guard online != isOnline else { return }
        isOnline = online
        for handler in handlers { handler(online) }
    }
}
