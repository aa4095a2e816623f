import Foundation
import Dispatch
import HTTPEngine
import EnRouteServer
import EnRouteStorage
import EnRouteNotifications
import Synchronization

/// `enroute serve`: the backend on one machine, SQLite underneath.
enum ServeCommand {
    static let help = """
    Usage: enroute serve [options]

    Runs the EnRoute backend: the trip API, live streams (SSE and WebSocket), /healthz, /readyz, /metrics.
    Every option can also come from the environment variable named beside it.

      --host ADDR       Address to listen on (ENROUTE_HOST, default 127.0.0.1).
      --port N          TCP port (ENROUTE_PORT, default 8080; 0 picks a free one).
      --db PATH         SQLite database file, created if missing (ENROUTE_DB, default ./enroute.sqlite).
      --secret S        HS256 secret for bearer tokens, at least 16 bytes (ENROUTE_JWT_SECRET;
                        default: a random secret kept in PATH.secret, which `enroute token` reads too).
      --threads N       HTTP worker threads (ENROUTE_THREADS, default: one per core).
      --max-connections N  Open connections before new ones get 503 (ENROUTE_MAX_CONNECTIONS, default 20000).
      --idle-timeout S  Seconds before an idle connection is closed (ENROUTE_IDLE_TIMEOUT, default 30).
      --header-timeout S  Seconds a request line and headers may take (ENROUTE_HEADER_TIMEOUT, default 10).
      --body-timeout S  Seconds a request body may take after its headers (ENROUTE_BODY_TIMEOUT, default 30).
      --request-deadline S  Seconds a handler may run before 503 (ENROUTE_REQUEST_DEADLINE, default 30).

    Dispatch and live location:
      --offer-timeout S       Seconds a provider has to answer an offer (ENROUTE_OFFER_TIMEOUT, default 15).
      --dispatch-candidates N Offers per search before giving up (ENROUTE_DISPATCH_CANDIDATES, default 5).
      --dispatch-limit S      Seconds one search may last (ENROUTE_DISPATCH_LIMIT, default 120); a ride then
                              ends in noDriversFound.
      --delivery-retry S      Seconds before a delivery's search starts over (ENROUTE_DELIVERY_RETRY, default 60).
      --fix-lifetime S        Seconds a provider's latest position counts (ENROUTE_FIX_LIFETIME, default 120).

    Push notifications (APNs token auth; give all four, or none to log pushes instead of sending them):
      --apns-key-id ID  The 10-character key id of the .p8 signing key (ENROUTE_APNS_KEY_ID).
      --apns-team-id ID The 10-character Apple team id (ENROUTE_APNS_TEAM_ID).
      --apns-key PATH   The AuthKey_<id>.p8 file downloaded from the developer portal (ENROUTE_APNS_KEY).
      --apns-topic ID   The app's bundle id, e.g. com.enroute.app (ENROUTE_APNS_TOPIC).
    Each device's registration says sandbox or production, and its pushes go to that APNs host.

    SIGTERM or SIGINT stops accepting, finishes requests in flight, ends streams cleanly and exits 0.
    """

    static func run(_ args: [String]) async throws -> Int32 {
        let options = try Options(args)
        if options.has("help") { print(help); return 0 }
        var config = HTTPServerConfiguration()
        config.host = options.string("host", env: "ENROUTE_HOST") ?? "127.0.0.1"
        if let port = try options.int("port", env: "ENROUTE_PORT") {
            guard (0...65535).contains(port) else { throw CLIError("--port must be 0...65535") }
            config.port = UInt16(port)
        }
        if let threads = try options.int("threads", env: "ENROUTE_THREADS") { config.threads = max(1, threads) }
        if let limit = try options.int("max-connections", env: "ENROUTE_MAX_CONNECTIONS") { config.connectionLimit = max(1, limit) }
        if let idle = try options.int("idle-timeout", env: "ENROUTE_IDLE_TIMEOUT") { config.idleTimeoutSeconds = UInt32(max(1, idle)) }
        if let s = try options.int("header-timeout", env: "ENROUTE_HEADER_TIMEOUT") { config.headerTimeout = .seconds(max(1, s)) }
        if let s = try options.int("body-timeout", env: "ENROUTE_BODY_TIMEOUT") { config.bodyTimeout = .seconds(max(1, s)) }
        if let s = try options.int("request-deadline", env: "ENROUTE_REQUEST_DEADLINE") { config.requestDeadline = .seconds(max(1, s)) }
        let database = options.string("db", env: "ENROUTE_DB") ?? "./enroute.sqlite"
        let secret = try Secrets.jwtSecret(options, database: database)

        // Signals are caught before anything listens, so a SIGTERM at any moment drains cleanly.
        let stop = AsyncStream<Int32>.makeStream()
        var sources: [any DispatchSourceSignal] = []
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .main)
            source.setEventHandler { stop.continuation.yield(sig) }
            source.resume()
            sources.append(source)
        }
        let store = try SQLiteTripStore(path: database)
        let now: @Sendable () -> Date = { Date() }
        let notifications = try SQLiteNotificationRepository(path: database)
        let directory = StaticDirectory.helsinkiDemo
        let service = TripService(store: store, directory: directory, observers: [OrderPushPlanner(directory: directory)], now: now)
        try service.warm()
        let metrics = MetricsRegistry()
        // Dispatch hands each offer to the planner, whose new job wakes the sender, which asks dispatch
        // whether the offer is still open when it sends.
        let lateSender = Late<PushSender>()
        let offers = OfferPushPlanner(store: store, devices: notifications, now: now, queued: { lateSender.value?.wake() }, log: { log($0) })
        let providers = ProviderOperations(service: service, metrics: metrics, clock: ContinuousClock(),
                                           paths: try SQLitePathStore(tripStore: store), policy: try dispatchPolicy(options),
                                           fixLifetime: TimeInterval(try positive(options, "fix-lifetime", env: "ENROUTE_FIX_LIFETIME") ?? 120),
                                           offers: offers)
        let sender = PushSender(store: store, devices: notifications, ledger: notifications, gateway: try pushGateway(options, now: now),
                                clock: ContinuousClock(), now: now, metrics: metrics,
                                offerIsOpen: { offerId, provider in providers.dispatcher.liveOffer(heldBy: provider)?.offerId == offerId },
                                log: { log($0) })
        lateSender.value = sender
        let api = EnRouteAPI(service: service, auth: Authenticator(secret: secret, now: now), metrics: metrics,
                             openAPI: OpenAPIDocument.text(), providers: providers, ready: {
                                 do { _ = try store.trip(id: "readiness-probe"); return true } catch { return false }
                             })
        var router = api.router()
        NotificationsAPI(auth: api.auth, devices: notifications, ledger: notifications, metrics: metrics, now: now).register(into: &router)
        let server = HTTPServer(router: router, configuration: config, metrics: metrics)
        try server.start()
        // The push outbox survives restarts; the sender resumes whatever is due.
        let sending = Task { await sender.run() }
        // Trips still waiting for a provider when the server stopped are searched for again.
        try providers.dispatcher.start()
        log("listening on http://\(config.host):\(server.port) (database \(database), schema v\(store.schemaVersion))")

        // Old idempotency keys are dropped hourly.
        let purge = Task {
            while !Task.isCancelled {
                try? await store.purgeIdempotency(before: now().addingTimeInterval(-service.idempotencyRetention))
                try? await Task.sleep(for: .seconds(3600))
            }
        }
        var signals = stop.stream.makeAsyncIterator()
        let received = await signals.next() ?? SIGTERM
        log("received signal \(received); draining")
        purge.cancel()
        sending.cancel()
        providers.dispatcher.stop()
        await server.shutdown()
        log("stopped cleanly")
        _ = sources
        return 0
    }

    /// The dispatcher's limits from flags and environment, defaults otherwise.
    static func dispatchPolicy(_ options: Options) throws -> DispatchPolicy {
        var policy = DispatchPolicy()
        if let s = try positive(options, "offer-timeout", env: "ENROUTE_OFFER_TIMEOUT") { policy.offerTimeout = .seconds(s) }
        if let n = try positive(options, "dispatch-candidates", env: "ENROUTE_DISPATCH_CANDIDATES") { policy.maxCandidates = n }
        if let s = try positive(options, "dispatch-limit", env: "ENROUTE_DISPATCH_LIMIT") { policy.searchLimit = .seconds(s) }
        if let s = try positive(options, "delivery-retry", env: "ENROUTE_DELIVERY_RETRY") { policy.deliveryRetry = .seconds(s) }
        return policy
    }

    static func positive(_ options: Options, _ name: String, env: String) throws -> Int? {
        guard let value = try options.int(name, env: env) else { return nil }
        guard value > 0 else { throw CLIError("--\(name) must be at least 1") }
        return value
    }

    /// APNs when all four settings are given, a log line per push when none is.
    static func pushGateway(_ options: Options, now: @escaping @Sendable () -> Date) throws -> any PushGateway {
        let keyID = options.string("apns-key-id", env: "ENROUTE_APNS_KEY_ID")
        let teamID = options.string("apns-team-id", env: "ENROUTE_APNS_TEAM_ID")
        let keyPath = options.string("apns-key", env: "ENROUTE_APNS_KEY")
        let topic = options.string("apns-topic", env: "ENROUTE_APNS_TOPIC")
        let given = [keyID, teamID, keyPath, topic].compactMap { $0 }
        if given.isEmpty {
            log("APNs is not configured: pushes are logged, not sent (see --apns-key-id, --apns-team-id, --apns-key, --apns-topic)")
            return LogPushGateway(log: { log($0) })
        }
        guard let keyID, let teamID, let keyPath, let topic else {
            throw CLIError("APNs needs all of --apns-key-id, --apns-team-id, --apns-key and --apns-topic")
        }
        guard let pem = try? String(contentsOfFile: keyPath, encoding: .utf8) else { throw CLIError("cannot read the APNs key \(keyPath)") }
        do {
            let client = try APNsClient(configuration: APNsConfiguration(keyID: keyID, teamID: teamID, privateKeyPEM: pem, topic: topic),
                                        transport: CurlAPNsTransport(), now: now, log: { log($0) })
            log("APNs configured: key \(keyID), team \(teamID), topic \(topic)")
            return client
        } catch {
            throw CLIError("the APNs key \(keyPath) is not a P-256 .p8 key: \(error)")
        }
    }

    static func log(_ message: String) {
        FileHandle.standardError.write(Data("[enroute] \(ISO8601DateFormatter().string(from: Date())) \(message)\n".utf8))
    }
}

/// A value set once after the closures that read it were made (the push sender and dispatch need each other).
private final class Late<Value: Sendable>: Sendable {
    private let box = Mutex<Value?>(nil)
    var value: Value? {
        get { box.withLock { $0 } }
        set { box.withLock { $0 = newValue } }
    }
}
