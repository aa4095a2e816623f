import AppleAdapters
import ClientKit
import Foundation
import HTTPTransport
import NotificationsKit
import OrderTracking
import RideHailing

/// The composition root: every kit object the app uses, made once and wired together. Nothing here decides anything.
@MainActor
final class RiderDependencies {
    let configuration: RiderConfiguration

    // Rides
    let trips: TripViewModel
    let rides: LiveRideService
    let tripAPI: RemoteTripAPI
    let location: RideLocationService

    // Orders
    let lifecycle: OrderTrackingAppLifecycle
    let store: OrderTrackingStore
    let polling: TrackingPollingEngine
    let liveActivities: OrderLiveActivityEngine
    let banner: HomeBannerViewModel
    private let freshness: TrackingFreshnessPolicy
    private let dates: SystemDateProvider

    // Notifications
    let engine: NotificationEngine
    let root: AppRootViewModel
    let askForPush: DefaultAskForPushUseCase

    init(configuration: RiderConfiguration) {
        let http = URLSessionHTTPClient()
        let server = APIServer(baseURL: configuration.server, credentials: StaticAccessToken(configuration.accessToken))
        let clock = ContinuousClock()
        let dates = SystemDateProvider()
        let freshness = TrackingFreshnessPolicy()

        let tripAPI = RemoteTripAPI(client: http, server: server)
        let feed = LiveTripFeed(api: tripAPI, channel: SSELiveTripChannel(client: http, server: server), clock: clock)

        let lifecycle = OrderTrackingAppLifecycle()
        let tracking = RemoteOrderTrackingRepository(http: http, server: server, clock: clock)
        let store = OrderTrackingStore(tracking: tracking)

        let keys = NotificationKeychainKeyStore(accessGroup: configuration.keychainGroup)
        let inbox = RemoteNotificationInboxRepository(http: http, server: server, clock: clock)
        let devices = RemoteDeviceRepository(
            http: http, server: server,
            device: DeviceInfo(environment: configuration.apnsEnvironment, appVersion: configuration.appVersion),
            keys: keys)
        let engine = NotificationEngine(
            center: NotificationCenterAdapter(), inbox: inbox, devices: devices, keys: keys,
            account: nil)
        let root = AppRootViewModel(
            inbox: inbox,
            openNotification: DefaultOpenNotificationUseCase(
                opens: inbox, session: SignedInSession(account: configuration.account)))
        engine.visibleRoute = { [root] in root.visibleRoute }

        self.configuration = configuration
        self.tripAPI = tripAPI
        trips = TripViewModel(feed: feed, clock: clock, payments: tripAPI, dates: dates)
        rides = LiveRideService(feed: feed)
        location = RideLocationService()
        self.lifecycle = lifecycle
        self.store = store
        polling = TrackingPollingEngine(tracking: tracking, lifecycle: lifecycle, network: OrderTrackingNetworkStatus())
        liveActivities = OrderLiveActivityEngine(
            tracking: tracking, snapshots: tracking,
            activities: OrderTrackingActivityController(), lifecycle: lifecycle)
        banner = HomeBannerViewModel(store: store, freshness: freshness, clock: dates)
        self.freshness = freshness
        self.dates = dates
        self.engine = engine
        self.root = root
        askForPush = DefaultAskForPushUseCase(permission: engine)
    }

    /// Runs what lasts as long as the app: polling, the Live Activities, the sign-in's notification setup and the
    /// tracking store. Returns when the calling task is cancelled.
    func run() async {
        polling.start()
        liveActivities.start()
        await askForPush.askQuietly()
        // The demo signs in at every launch (a real app does it once, at sign-in): a new key pair, registered.
        await engine.accountChanged(to: configuration.account)
        await store.start()
    }

    /// The tracking screen's model for `orderID`, which the polling engine now follows even before the active
    /// orders name it (a notification tap).
    func trackingModel(orderID: String) -> OrderTrackingViewModel {
        polling.follow(.init(orderID))
        return OrderTrackingViewModel(order: .init(orderID), store: store, freshness: freshness, clock: dates)
    }
}

/// The signed-in account, as the notification code asks for it; a real app answers from its session store.
struct SignedInSession: Session {
    let account: AccountID

    func currentAccount() async -> AccountID? { account }
}
