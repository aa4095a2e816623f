public import Foundation
public import HTTPEngine
public import EnRouteDomain
public import EnRouteAPI
import EnRouteModels
import OrderTracking

/// The browser surfaces over the backend: the share-tracking page (`/share/{token}`), the operations console
/// (`/ops`), the road map drawn from EnRoute's own graph (`/map/roads.geojson`) and Leaflet's files
/// (`/assets/leaflet/*`).
public final class WebSurfaces: Sendable {
    let service: TripService
    let providers: ProviderOperations
    let paths: any PathStore
    let auth: Authenticator
    let wire: WireMapping
    let links: any ShareLinkStore
    let journal: OpsJournal
    let roadMap: RoadMap?
    let clock: any Clock<Duration>
    let configuration: WebConfiguration
    let freshness: TrackingFreshnessPolicy
    let shareSigner: SignedToken
    let consoleSigner: SignedToken
    let consoleSignals = Broadcast()
    /// `configuration.publicBaseURL` without a trailing `/`, or the address `serve(at:)` learned.
    private let linkBase: MutexBox<String?>
    /// The zones' levels of demand the console colours (`showZones`); none until told.
    let zoneLevels = MutexBox<@Sendable () -> [ZoneLevel]>({ [] })

    /// The surfaces over `service` and `providers`; links and cookies are signed with keys derived from `secret`,
    /// revocations kept in `links`, pages re-worded on `clock`.
    public init(
        service: TripService, providers: ProviderOperations, paths: any PathStore, auth: Authenticator,
        wire: WireMapping,
        secret: String, links: any ShareLinkStore, journal: OpsJournal, roadMap: RoadMap?, clock: any Clock<Duration>,
        configuration: WebConfiguration = WebConfiguration()
    ) {
        self.service = service; self.providers = providers; self.paths = paths; self.auth = auth; self.wire = wire
        self.links = links; self.journal = journal; self.roadMap = roadMap; self.clock = clock;
        self.configuration = configuration
        linkBase = MutexBox(configuration.publicBaseURL.map(Self.base))
        freshness = TrackingFreshnessPolicy(locale: configuration.locale, timeZone: configuration.timeZone)
        shareSigner = SignedToken(secret: secret, purpose: "share-link v1")
        consoleSigner = SignedToken(secret: secret, purpose: "ops-console v1")
        let signals = consoleSignals
        service.onChange { _, _ in signals.signal() }
    }

    /// The console colours the zones `levels` gives, by busy-time multiplier.
    public func showZones(_ levels: @escaping @Sendable () -> [ZoneLevel]) { zoneLevels.update { $0 = levels } }

    /// Links point at `url` from now on, when no public URL was configured (a server started on port 0 knows where it
    /// listens only once it does).
    public func serve(at url: URL) {
        linkBase.update { if configuration.publicBaseURL == nil { $0 = Self.base(url.absoluteString) } }
    }

    /// Where links point: the configured public URL, or where the server listens; nil when neither is known.
    var publicBase: String? { linkBase.get() }

    /// Whether the public URL is https: the console's cookie then travels over https only.
    var isPublicHTTPS: Bool { publicBase?.lowercased().hasPrefix("https://") ?? false }

    private static func base(_ url: String) -> String {
        url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    /// Registers every route of the pages and their JSON.
    public func register(into r: inout Router) {
        addShareRoutes(&r)
        addConsoleRoutes(&r)
        addMapRoutes(&r)
    }

    /// The headers every page carries: no request may leave the machine, nothing is cached.
    static func pageHeaders(_ status: Int = 200) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "text/html; charset=utf-8")
        headers.add("Cache-Control", "no-store")
        headers.add(
            "Content-Security-Policy",
            "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' "
                + "data:; connect-src 'self'"
        )
        headers.add("Referrer-Policy", "no-referrer")
        return HTTPResponse(status: status, headers: headers)
    }

    static func page(_ html: String, status: Int = 200) -> HTTPResponse {
        var response = pageHeaders(status)
        response.body = .bytes(Array(html.utf8))
        return response
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// Wakes every waiting console stream: each gets the newest signal only (a burst of commits is one refresh).
final class Broadcast: Sendable {
    private let waiters = MutexBox<[UInt64: AsyncStream<Void>.Continuation]>([:])
    private let next = MutexBox<UInt64>(0)

    func signal() { for c in waiters.get().values { c.yield() } }

    /// Signals from now on, until the caller stops iterating.
    func subscribe() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = next.update {
            $0 += 1; return $0
        }
        waiters.update { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.waiters.update { $0[id] = nil } }
        return stream
    }
}
