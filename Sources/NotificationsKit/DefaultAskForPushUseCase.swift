/// `AskForPushUseCase` over `NotificationPermission`.
@MainActor
public final class DefaultAskForPushUseCase: AskForPushUseCase {
    private let permission: any NotificationPermission
    private var prompted = false

    public init(permission: any NotificationPermission) { self.permission = permission }

    public func askQuietly() async {
        guard await permission.current() == .notAsked else { return }
        _ = await permission.request(provisional: true)
    }

    public func askAfterFirstOrder() async -> PushPermission {
        let status = await permission.current()
        switch status {
        case .allowed, .denied:
            return status
        case .notAsked, .quiet:
            // iOS shows its prompt only once; after that the answer is Settings, never the system prompt again.
            guard !prompted else { return status }
            prompted = true
            return await permission.request(provisional: false)
        }
    }
}
