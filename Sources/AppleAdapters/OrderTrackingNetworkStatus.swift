#if canImport(Network)
@preconcurrency import Network
import Dispatch
public import OrderTracking

/// `NetworkStatus` over `NWPathMonitor`, delivered on the main actor. No logic.
@MainActor
public final class OrderTrackingNetworkStatus: NetworkStatus {
    // `cancel()` is safe from any thread, and deinit runs off the main actor.
    private nonisolated(unsafe) let monitor = NWPathMonitor()
    /// True while a usable path exists (assumed until the monitor first says otherwise).
    public private(set) var isOnline = true
    private var handlers: [@MainActor (Bool) -> Void] = []

    /// A status that starts watching the network at once.
    public init() {
        monitor.pathUpdateHandler = { [weak self] path in
            let online = path.status == .satisfied
            Task { @MainActor [weak self] in self?.update(online) }
        }
        monitor.start(queue: DispatchQueue(label: "enroute.network-status"))
    }

    deinit { monitor.cancel() }

    /// Calls `handler` after every change of `isOnline`.
    public func observe(_ handler: @escaping @MainActor (Bool) -> Void) { handlers.append(handler) }

    private func update(_ online: Bool) {
        guard online != isOnline else { return }
        isOnline = online
        for handler in handlers { handler(online) }
    }
}
#endif
