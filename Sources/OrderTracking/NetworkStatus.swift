/// Whether the device can reach the network (NWPathMonitor on iOS); the polling engine's second trigger.
@MainActor
public protocol NetworkStatus: AnyObject {
    /// True while a usable path exists.
    var isOnline: Bool { get }
    /// Calls `handler` after every change of `isOnline`.
    func observe(_ handler: @escaping @MainActor (Bool) -> Void)
}
