import Foundation

/// The only part that touches the OS's notification APIs (through `NotificationCenterClient`): it turns OS callbacks
/// into app models, taps into the inbox and tokens into the device repository.
@MainActor
public final class NotificationEngine: NotificationPermission {
    private let center: any NotificationCenterClient
    private let inbox: any TapSink
    private let devices: any DeviceRegistration
    private let keys: any KeyStore
    private let presentation: ForegroundPresentationPolicy
    private var started = false
    private var token: DeviceToken?
    private var account: AccountID?
    /// What the user is looking at now; the root view model supplies it.
    public var visibleRoute: @MainActor () -> Route? = { nil }
    /// Registration failures, for metrics; the next launch retries.
    public private(set) var registrationFailures = 0

    public init(
        center: any NotificationCenterClient, inbox: any TapSink, devices: any DeviceRegistration, keys: any KeyStore,
        presentation: ForegroundPresentationPolicy = ForegroundPresentationPolicy(), account: AccountID?
    ) {
        self.center = center
        self.inbox = inbox
        self.devices = devices
        self.keys = keys
        self.presentation = presentation
        self.account = account
    }

    /// In didFinishLaunching: delegate, categories (once), register (every launch, permission or not).
    public func start() {
        if !started {
            started = true
            center.setDelegate(self)
            center.setCategories(NotificationCategory.all)
        }
        center.registerForRemoteNotifications()
    }

    /// From the app delegate.
    public func didRegister(deviceToken: [UInt8]) async {
        let token = DeviceToken(deviceToken)
        self.token = token
        await register()
    }

    /// Sign-in makes a key pair and registers again. Sign-out removes the token first, then the key.
    /// The session awaits this before it drops the credentials.
    public func accountChanged(to newAccount: AccountID?) async {
        let previous = account
        guard newAccount != previous else { return }
        if let previous {
            await inbox.accountSignedOut(previous)
            // offline: the inbox drops its taps
            do { try await devices.unregister() } catch { registrationFailures += 1 }
            await keys.deleteKeyPair()
        }
        account = newAccount
        guard let newAccount else {
            center.unregisterForRemoteNotifications()
            return
        }
        await inbox.accountSignedIn(newAccount)
        _ = try? await keys.makeKeyPair()
        center.registerForRemoteNotifications()
        await register()
    }

    /// A tap on a notification or one of its buttons (didReceive response).
    public func didReceive(userInfo: [AnyHashable: Any], actionIdentifier: String) async {
        await didReceive(NotificationPayload(userInfo: userInfo), actionIdentifier: actionIdentifier)
    }

    /// A tap, its payload already read from `userInfo` (the delegate reads it before it changes actors:
    /// `userInfo` is not `Sendable`, the payload is).
    public func didReceive(_ payload: NotificationPayload, actionIdentifier: String) async {
        guard let tap = payload.tap(action: TapAction(actionIdentifier: actionIdentifier)) else { return }
        await inbox.receive(tap)
    }

    /// A push arriving in the foreground (willPresent): the policy decides.
    public func willPresent(userInfo: [AnyHashable: Any]) -> ForegroundPresentation {
        willPresent(NotificationPayload(userInfo: userInfo))
    }

    /// A push arriving in the foreground, its payload already read from `userInfo`.
    public func willPresent(_ payload: NotificationPayload) -> ForegroundPresentation {
        presentation.presentation(for: payload.route, visible: visibleRoute())
    }

    // MARK: NotificationPermission

    public func current() async -> PushPermission { await center.authorizationStatus() }

    public func request(provisional: Bool) async -> PushPermission {
        _ = try? await center.requestAuthorization(provisional: provisional)
        return await center.authorizationStatus()
    }

    private func register() async {
        guard let token else { return }
        do { try await devices.register(token: token, for: account) } catch { registrationFailures += 1 }
    }
}
