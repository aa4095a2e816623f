import Foundation
import EnRouteLogging
import Dispatch
import HTTPEngine
import EnRouteAPI
import EnRouteBackend
import EnRouteDomain
import EnRouteNotifications
import EnRouteRedis
import EnRouteRoads
import EnRouteSandbox
import EnRouteWeb
import RedisClient

/// `enroute serve`'s start, phase by phase: the settings read before signals are caught, the backend's configuration
/// and effects, the listening server, and the wait for a signal and the drain after it.
extension ServeCommand {
    /// What `serve` reads before it catches signals, in the order it checks them: the listener, the store, the
    /// token secrets and limits, the push gateway and the call relay.
    struct Settings {
        var http: HTTPServerConfiguration
        var storage: BackendConfiguration.Storage
        var secret: String
        var rateLimits: RateLimits
        var previousSecrets: [String]
        var tokenLeeway: TimeInterval
        var push: any PushGateway
        var telephony: any TelephonyRelay
        var calls: CallPolicy
    }

    /// The services the backend gets beside its configuration: live road speeds and the payment gateway.
    struct Services {
        var speeds: LiveRoadSpeeds?
        var payments: any PaymentGateway
        var paymentWebhook: (@Sendable ([UInt8], String?) throws -> GatewayEvent)?
    }

    /// The settings, each checked as it is read.
    static func settings(_ options: Options) throws -> Settings {
        var http = HTTPServerConfiguration()
        http.host = options.string("host") ?? "127.0.0.1"
        if let port = try options.int("port", in: 0...65535) { http.port = UInt16(port) }
        if let threads = try options.int("threads", in: 1...1024) { http.threads = threads }
        if let limit = try options.int("max-connections", in: 1...Int.max) { http.connectionLimit = limit }
        if let idle = try options.int("idle-timeout", in: 1...86_400) { http.idleTimeoutSeconds = UInt32(idle) }
        let storage = try storage(options)
        if let s = try options.int("header-timeout", in: 1...3600) { http.headerTimeout = .seconds(s) }
        if let s = try options.int("body-timeout", in: 1...3600) { http.bodyTimeout = .seconds(s) }
        if let s = try options.int("request-deadline", in: 1...3600) { http.requestDeadline = .seconds(s) }
        let secret = try jwtSecret(options, storage: storage)
        let rateLimits =
            try options.string("rate-limits").map { text in
                do { return try RateLimits.parse(text) } catch { throw CLIError("--rate-limits: \(error)") }
            } ?? .standard
        log("rate limits per account: \(rateLimits)")
        let previousSecrets = try Secrets.previousSecrets(options)
        let leeway = TimeInterval(try options.int("token-leeway", in: 0...3600) ?? 30)
        let push = try pushGateway(options, now: { Date() })
        let telephony = try telephony(options), calls = try callPolicy(options)
        return Settings(
            http: http, storage: storage, secret: secret, rateLimits: rateLimits, previousSecrets: previousSecrets,
            tokenLeeway: leeway, push: push, telephony: telephony, calls: calls)
    }

    /// The token secret: kept beside an SQLite database, given (the same on every node) for PostgreSQL.
    static func jwtSecret(_ options: Options, storage: BackendConfiguration.Storage) throws -> String {
        switch storage {
        case .sqlite(let path): return try Secrets.jwtSecret(options, database: path)
        default:
            // No database file to keep a generated secret beside: every node must be given the same one.
            guard options.sourced("secret") != nil else {
                throw CLIError(
                    "--store postgres://… needs the JWT secret from --secret or ENROUTE_JWT_SECRET (the same on "
                        + "every node)"
                )
            }
            return try Secrets.jwtSecret(options, database: "")
        }
    }

    /// SIGTERM and SIGINT into `continuation` from now on, instead of ending the process.
    static func catchSignals(into continuation: AsyncStream<Int32>.Continuation) {
        SignalCatcher.start([SIGTERM, SIGINT], into: continuation)
    }

    /// The backend's configuration from the settings and the rest of the options, with the road speeds and payment
    /// gateway those options choose.
    static func backendConfiguration(
        _ options: Options, settings: Settings, roads: (any RoadRouting)?
    ) throws -> (BackendConfiguration, Services) {
        var configuration = BackendConfiguration(storage: settings.storage, secret: settings.secret)
        configuration.previousSecrets = settings.previousSecrets
        configuration.tokenLeeway = settings.tokenLeeway
        configuration.rateLimits = settings.rateLimits
        configuration.dispatch = try dispatchPolicy(options)
        configuration.fixLifetime = TimeInterval(try options.int("fix-lifetime", in: 1...Int.max) ?? 120)
        configuration.endedTripCache = try options.int("ended-trip-cache", in: 0...10_000_000) ?? 10_000
        configuration.openAPI = try OpenAPIDocument.text()
        let zone = try timeZone(options)
        configuration.cities = try cities(options)
        log("cities: \(configuration.cities.names.joined(separator: ", "))")
        configuration.timeZone = zone
        let speeds = try liveSpeeds(options, roads: roads, timeZone: zone)
        configuration.unattachedHoldTimeout = TimeInterval(
            try options.int("unattached-hold-timeout", in: 1...30 * 86_400) ?? 900)
        let publicURL = try publicURL(options, host: settings.http.host, port: settings.http.port)
        let (payments, webhook) = try paymentGateway(options, publicURL: publicURL)
        configuration.web.timeZone = zone
        // Links and the console's cookie follow the public URL (or, without one, where the server listens, once it
        // does), never a request's Host.
        if options.string("public-url") != nil { configuration.web.publicBaseURL = publicURL.absoluteString }
        if let leaflet = options.string("leaflet-dir") { configuration.web.leafletDirectory = leaflet }
        Self.checkLeaflet(configuration.web.leafletDirectory)
        configuration.calls = settings.calls
        configuration.proofDirectory = options.string("proof-dir")
        if case .postgres = settings.storage {
            if configuration.proofDirectory == nil { configuration.proofDirectory = "./enroute.blobs" }
            // Several nodes on one database agree on when an offer or a lease ran out by its clock, not theirs.
            configuration.databaseClockDecidesOfferExpiry = true
        }
        return (configuration, Services(speeds: speeds, payments: payments, paymentWebhook: webhook))
    }

    /// The backend's effects: the system's, with the push gateway, roads, payments and call relay chosen, and with
    /// `--redis` the live bus and provider locations shared with other nodes (which names this node).
    static func backendEffects(
        _ options: Options, settings: Settings, roads: (any RoadRouting)?, services: Services,
        configuration: inout BackendConfiguration
    ) throws -> BackendEffects {
        var effects = BackendEffects.system(
            push: settings.push, roads: roads, roadSpeeds: services.speeds, payments: services.payments,
            paymentWebhook: services.paymentWebhook, log: logger.withLock { $0 })
        effects.telephony = settings.telephony
        if let (url, source) = options.sourced("redis") {
            let redis: RedisConfiguration
            do { redis = try RedisConfiguration(url: url) } catch { throw CLIError("\(source): \(error)") }
            configuration.node = try nodeName(options)
            effects.liveBus = RedisLiveBus(redis)
            // Who is online and where lives in the same Redis, so every node finds the providers of every other. A
            // presence call waits at most 2 s for Redis: a request never hangs on it (ingest keeps its fixes, the
            // availability and the nearby map answer 503).
            var presence = redis
            presence.connectTimeout = .seconds(2)
            presence.commandTimeout = .seconds(2)
            effects.providerLocations = RedisProviderLocations(
                redis: RedisConnection(presence), cities: configuration.cities,
                fixLifetime: configuration.fixLifetime, now: effects.now)
            log("node \(configuration.node): live fan-out and provider locations through \(url)")
        } else if options.string("node") != nil {
            throw CLIError("--node needs --redis (a node of its own needs no name)")
        }
        effects.roadMap = (roads as? LocalRoadRouting).map { RoadMap(network: $0.graph.network) }
        return effects
    }

    /// The HTTP server over the backend's router, listening; logs where, on what store, and its connection budget.
    static func startServer(
        _ options: Options, settings: Settings, backend: Backend, payments: any PaymentGateway,
        descriptors: (before: Int, after: Int)
    ) throws -> HTTPServer {
        let config = settings.http
        let server = HTTPServer(router: backend.router, configuration: config, metrics: backend.metrics)
        try server.start()
        // A port picked at start (--port 0) is known only now: the sandbox's challenge links name it.
        if options.string("public-url") == nil {
            let host = config.host == "0.0.0.0" ? "127.0.0.1" : config.host
            let listening = URL(string: "http://\(host):\(server.port)")!
            (payments as? SandboxGateway)?.serve(at: listening)
            backend.web.serve(at: listening)
        }
        log(
            "listening on http://\(config.host):\(server.port) (\(Self.describe(settings.storage)), schema "
                + "v\(backend.schemaVersion ?? 0))"
        )
        let budget = server.budget
        let raised = descriptors.after > descriptors.before ? " (raised from \(descriptors.before))" : ""
        log(
            "connections: at most \(budget.connectionCap) (asked \(config.connectionLimit)); descriptor limit "
                + "\(descriptors.after)\(raised), \(budget.reserve) kept for the process and for telling newcomers "
                + "over the cap 503")
        return server
    }

    /// Serves until a signal (or, with `--parent-pid`, the starter's end), then drains: the server first, then the
    /// backend and the background tasks.
    static func serveUntilStopped(
        _ options: Options, server: HTTPServer, backend: Backend,
        stop: (stream: AsyncStream<Int32>, continuation: AsyncStream<Int32>.Continuation)
    ) async throws {
        // What a burst freed goes back to the system (a burst of searching rides otherwise holds its peak).
        let trim = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(30))
                ProcessMemory.trim()
            }
        }
        let parentWatch = try watchParent(options, stop: stop.continuation)
        var signals = stop.stream.makeAsyncIterator()
        let received = await signals.next() ?? SIGTERM
        log("received signal \(received); draining")
        trim.cancel()
        parentWatch?.cancel()
        await server.shutdown()
        // Wait for the background tasks, so that everything is released before exit (LeakSanitizer checks at exit).
        await backend.stop()
        await trim.value
        await parentWatch?.value
        log("stopped cleanly")
    }

    /// With `--parent-pid`: the starter's end stops the server as a signal would (checked each second: no event
    /// tells of another process's end).
    static func watchParent(
        _ options: Options, stop: AsyncStream<Int32>.Continuation
    ) throws -> Task<Void, Never>? {
        try options.int("parent-pid", in: 1...Int(Int32.max)).map { pid in
            let watch = ParentWatch(pid: Int32(pid))
            log("stopping when process \(pid) is gone")
            return Task {
                while !Task.isCancelled, watch.isAlive() { try? await Task.sleep(for: .seconds(1)) }
                guard !Task.isCancelled else { return }
                log("process \(pid) is gone")
                stop.yield(SIGTERM)
            }
        }
    }
}
