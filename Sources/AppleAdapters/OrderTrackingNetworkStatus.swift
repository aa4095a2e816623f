#if canImport(Network)
import Network
import Dispatch
import OrderTracking

/// `NetworkStatus` over NWPathMonitor, delivered on the main actor. No logic.
@MainActor
final class OrderTrackingNetworkStatus: NetworkStatus {
    private let monitor = NWPathMonitor()
    private(set) var isOnline = true
    private var handlers: [@MainActor (Bool) -> Void] = []

    init() {
        monitor.pathUpdateHandler = { [weak self] path in
            let online = path.status == .satisfied
            Task { @MainActor in self?.update(online) }
        }
        monitor.start(queue: DispatchQueue(label: "enroute.network-status"))
    }

    deinit { monitor.cancel() }

    func observe(_ handler: @escaping @MainActor (Bool) -> Void) { handlers.append(handler) }

    private func update(_ online: Bool) {
        guard online != isOnline else { return }
        isOnline = online
        for handler in handlers { handler(online) }
    }
}
#endif
