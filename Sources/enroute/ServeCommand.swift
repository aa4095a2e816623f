import Foundation
import Dispatch
import HTTPEngine
import EnRouteBackend
import EnRouteDomain
import EnRouteSandbox
import EnRouteAPI
import EnRouteStorage
import EnRouteNotifications
import EnRouteAPNs
import Synchronization
import Routing
import EnRouteRoads
import HTTPTransport
import CurlTransport
import EnRouteStripe
import EnRouteModels
import EnRouteWeb
import EnRouteRedis
import RedisKit

/// `enroute serve`: the backend as one node, on SQLite by default or on PostgreSQL and Redis beside other nodes.
enum ServeCommand {
    static let spec = CommandSpec(
        name: "serve",
        synopsis: """
            Usage: enroute serve [options]

            Runs the EnRoute backend: the trip API, live streams (SSE and WebSocket), /healthz, /readyz, /metrics.
            Every option can also come from the environment variable named beside it.
            """,
        sections: [
            (
                nil,
                [
                    .value(
                        "host", "ADDR", env: "ENROUTE_HOST", "Address to listen on (ENROUTE_HOST, default 127.0.0.1)."),
                    .value(
                        "port", "N", env: "ENROUTE_PORT", "TCP port (ENROUTE_PORT, default 8080; 0 picks a free one)."),
                    .value(
                        "db", "PATH", env: "ENROUTE_DB",
                        "SQLite database file, created if missing (ENROUTE_DB, default ./enroute.sqlite)."),
                    .value(
                        "store", "URL", env: "ENROUTE_STORE",
                        """
                        Where the data lives: an SQLite file path, or postgres://user@host:port/db for PostgreSQL \
                        (ENROUTE_STORE;
                        default: --db). On PostgreSQL the JWT secret must come from --secret or \
                        ENROUTE_JWT_SECRET, and proof
                        uploads go to --proof-dir (default ./enroute.blobs).
                        """),
                    .value(
                        "leaflet-dir", "DIR", env: "ENROUTE_LEAFLET_DIR",
                        """
                        Where Leaflet's leaflet.js and leaflet.css are, for the share page and the ops console's maps
                        (ENROUTE_LEAFLET_DIR, default /usr/share/javascript/leaflet from scripts/install-web.sh).
                        """),
                    .value(
                        "graph", "FILE", env: "ENROUTE_GRAPH",
                        """
                        Road graph file from `enroute graph build`, loaded at start; a missing or damaged file
                        stops the server (ENROUTE_GRAPH).
                        """),
                    .value(
                        "router", "R", env: "ENROUTE_ROUTER",
                        """
                        Who answers road queries (ENROUTE_ROUTER): graph (EnRoute's own, from --graph; the
                        default when --graph is given) or osrm (an external OSRM at --osrm-url).
                        """),
                    .value(
                        "osrm-url", "URL", env: "ENROUTE_OSRM_URL",
                        "Base URL of the OSRM server for --router osrm, e.g. http://127.0.0.1:5000 "
                            + "(ENROUTE_OSRM_URL)."),
                    .value(
                        "redis", "URL", env: "ENROUTE_REDIS_URL",
                        """
                        The Redis that carries the live fan-out between nodes sharing one store, e.g.
                        redis://127.0.0.1:6379 (ENROUTE_REDIS_URL): every trip version and kept fix made on one
                        node reaches the watchers on all of them, and who is online and where (latest fixes, the
                        geo index per city) lives there, so dispatch and the nearby map on every node find every
                        provider. Default: none (a node of its own, presence in memory).
                        """),
                    .value(
                        "node", "NAME", env: "ENROUTE_NODE",
                        """
                        This node's name among several (ENROUTE_NODE; letters, digits, '-', '_'; default: host-pid).
                        """),
                    .value(
                        "cities", "FILE", env: "ENROUTE_CITIES",
                        """
                        A GeoJSON FeatureCollection of the cities served (ENROUTE_CITIES): one Polygon or MultiPolygon
                        Feature per city, named by properties.name. Trips, provider positions and dispatch are
                        partitioned by city; a pickup outside every city is refused. Default: one city everywhere.
                        """),
                    .value(
                        "time-zone", "TZ", env: "ENROUTE_TIME_ZONE",
                        """
                        The service area's time zone, e.g. Europe/Helsinki (ENROUTE_TIME_ZONE, default UTC): the hour of
                        the week that road speeds and the ETA error model are read by.
                        """),
                    .value(
                        "live-speeds", "on|off", env: "ENROUTE_LIVE_SPEEDS",
                        """
                        With --router graph: road speeds follow the time-of-day table and providers' kept fixes, applied
                        every 30 s while serving (ENROUTE_LIVE_SPEEDS, default on); off keeps the graph's \
                        free-flow speeds.
                        """),
                    .value(
                        "speed-table", "FILE", env: "ENROUTE_SPEED_TABLE",
                        """
                        Time-of-day speed factors per road class and hour of the week (`enroute-speeds 1` text; see
                        docs/roads.md), replacing the standard table (ENROUTE_SPEED_TABLE).
                        """),
                    .value(
                        "secret", "S", env: "ENROUTE_JWT_SECRET",
                        """
                        HS256 secret for bearer tokens, at least 16 bytes (ENROUTE_JWT_SECRET;
                        default: a random secret kept in PATH.secret, which `enroute token` reads too).
                        """),
                    .value(
                        "previous-secret", "S", env: "ENROUTE_JWT_PREVIOUS_SECRETS", repeatable: true,
                        """
                        A retired secret whose tokens still verify while the secret rotates; repeatable
                        (ENROUTE_JWT_PREVIOUS_SECRETS, comma-separated). Tokens name their key by kid.
                        """),
                    .value(
                        "token-leeway", "S", env: "ENROUTE_JWT_LEEWAY",
                        "Clock skew allowed on a token's exp, nbf and iat (ENROUTE_JWT_LEEWAY, default 30)."),
                    .value(
                        "threads", "N", env: "ENROUTE_THREADS",
                        "HTTP event loops, a thread each (ENROUTE_THREADS, default: one per core but one, at "
                            + "least one)."
                    ),
                    .value(
                        "max-connections", "N", env: "ENROUTE_MAX_CONNECTIONS",
                        "Open connections before new ones get 503 (ENROUTE_MAX_CONNECTIONS, default 20000)."),
                    .value(
                        "idle-timeout", "S", env: "ENROUTE_IDLE_TIMEOUT",
                        "Seconds before an idle connection is closed (ENROUTE_IDLE_TIMEOUT, default 30)."),
                    .value(
                        "header-timeout", "S", env: "ENROUTE_HEADER_TIMEOUT",
                        "Seconds a request line and headers may take (ENROUTE_HEADER_TIMEOUT, default 10)."),
                    .value(
                        "body-timeout", "S", env: "ENROUTE_BODY_TIMEOUT",
                        "Seconds a request body may take after its headers (ENROUTE_BODY_TIMEOUT, default 30)."),
                    .value(
                        "request-deadline", "S", env: "ENROUTE_REQUEST_DEADLINE",
                        "Seconds a handler may run before 503 (ENROUTE_REQUEST_DEADLINE, default 30)."),
                    .value(
                        "ended-trip-cache", "N", env: "ENROUTE_ENDED_TRIP_CACHE",
                        """
                        Ended trips kept in memory for the reads that follow their end; older ones are read
                        from the database (ENROUTE_ENDED_TRIP_CACHE, default 10000).
                        """),
                    .value(
                        "rate-limits", "L", env: "ENROUTE_RATE_LIMITS",
                        """
                        Per-account limits (ENROUTE_RATE_LIMITS): off, or class=N/PERIOD entries over the
                        defaults creates=10/60s,steps=120/60s,locations=600/60s,estimates=60/60s
                        (a class=off entry lifts one class); over the limit a request gets 429.
                        """),
                ]
            ),
            (
                "Dispatch and live location:",
                [
                    .value(
                        "offer-timeout", "S", env: "ENROUTE_OFFER_TIMEOUT",
                        "Seconds a provider has to answer an offer (ENROUTE_OFFER_TIMEOUT, default 15)."),
                    .value(
                        "dispatch-candidates", "N", env: "ENROUTE_DISPATCH_CANDIDATES",
                        "Offers per search before giving up (ENROUTE_DISPATCH_CANDIDATES, default 5)."),
                    .value(
                        "dispatch-limit", "S", env: "ENROUTE_DISPATCH_LIMIT",
                        """
                        Seconds one search may last (ENROUTE_DISPATCH_LIMIT, default 120); a ride then
                        ends in noDriversFound.
                        """),
                    .value(
                        "delivery-retry", "S", env: "ENROUTE_DELIVERY_RETRY",
                        "Seconds before a delivery's search starts over (ENROUTE_DELIVERY_RETRY, default 60)."),
                    .value(
                        "fix-lifetime", "S", env: "ENROUTE_FIX_LIFETIME",
                        "Seconds a provider's latest position counts (ENROUTE_FIX_LIFETIME, default 120)."),
                ]
            ),
            (
                "Payments:",
                [
                    .value(
                        "payments", "G", env: "ENROUTE_PAYMENTS",
                        """
                        The payment gateway (ENROUTE_PAYMENTS): sandbox (in-process, honouring Stripe's test payment
                        methods; the default) or stripe (the secret key from ENROUTE_STRIPE_KEY, webhook signing secrets
                        from ENROUTE_STRIPE_WEBHOOK_SECRET, comma-separated while rotating).
                        """),
                    .value(
                        "stripe-url", "URL", env: "ENROUTE_STRIPE_URL",
                        "Stripe's API base URL (ENROUTE_STRIPE_URL, default https://api.stripe.com), e.g. a stand-in."),
                    .value(
                        "unattached-hold-timeout", "S", env: "ENROUTE_UNATTACHED_HOLD_TIMEOUT",
                        """
                        Seconds after which a hold no trip took (its request failed or the server died mid-request) is
                        released (ENROUTE_UNATTACHED_HOLD_TIMEOUT, default 900).
                        """),
                    .value(
                        "parent-pid", "PID", env: "ENROUTE_PARENT_PID",
                        """
                        Stop (draining, as on SIGTERM) once process PID is gone, e.g. the script that started the \
                        server, even
                        one killed without a chance to stop it (ENROUTE_PARENT_PID).
                        """),
                    .value(
                        "public-url", "URL", env: "ENROUTE_PUBLIC_URL",
                        """
                        The server's address as customers reach it (ENROUTE_PUBLIC_URL, default http://HOST:PORT): bank
                        challenges link back to it.
                        """),
                ]
            ),
            ("Calls and proof of delivery:", contactOptions),
            (
                "Push notifications (APNs token auth; give all four, or none to log pushes instead of sending them):",
                [
                    .value(
                        "apns-key-id", "ID", env: "ENROUTE_APNS_KEY_ID",
                        "The 10-character key id of the .p8 signing key (ENROUTE_APNS_KEY_ID)."),
                    .value(
                        "apns-team-id", "ID", env: "ENROUTE_APNS_TEAM_ID",
                        "The 10-character Apple team id (ENROUTE_APNS_TEAM_ID)."),
                    .value(
                        "apns-key", "PATH", env: "ENROUTE_APNS_KEY",
                        "The AuthKey_<id>.p8 file downloaded from the developer portal (ENROUTE_APNS_KEY)."),
                    .value(
                        "apns-topic", "ID", env: "ENROUTE_APNS_TOPIC",
                        "The app's bundle id, e.g. com.enroute.app (ENROUTE_APNS_TOPIC)."),
                    .value(
                        "apns-url", "URL", env: "ENROUTE_APNS_URL",
                        """
                        Send every push to this https base URL instead of Apple's hosts, e.g. a local
                        stand-in (ENROUTE_APNS_URL).
                        """),
                    .value(
                        "apns-ca", "PATH", env: "ENROUTE_APNS_CA",
                        "Also trust this PEM certificate for APNs, e.g. the stand-in's (ENROUTE_APNS_CA)."),
                ]
            ),
        ],
        footer: """
            Each device's registration says sandbox or production, and its pushes go to that APNs host.

            SIGTERM or SIGINT stops accepting, finishes requests in flight, ends streams cleanly and exits 0.
            """)

    static func run(_ args: [String]) async throws -> Int32 {
        let options = try spec.parse(args)
        if options.has("help") { print(spec.helpText); return 0 }
        ProcessMemory.limitArenas()
        // Every connection is a descriptor: take all the kernel allows before anything is opened.
        let descriptors = DescriptorLimit.raiseToHard()
        // The graph loads before anything is opened or listens, so a bad file leaves nothing behind.
        let roads = try loadRoads(options)
        var config = HTTPServerConfiguration()
        config.host = options.string("host") ?? "127.0.0.1"
        if let port = try options.int("port", in: 0...65535) { config.port = UInt16(port) }
        if let threads = try options.int("threads", in: 1...1024) { config.threads = threads }
        if let limit = try options.int("max-connections", in: 1...Int.max) { config.connectionLimit = limit }
        if let idle = try options.int("idle-timeout", in: 1...86_400) { config.idleTimeoutSeconds = UInt32(idle) }
        let storage = try storage(options)
        if let s = try options.int("header-timeout", in: 1...3600) { config.headerTimeout = .seconds(s) }
        if let s = try options.int("body-timeout", in: 1...3600) { config.bodyTimeout = .seconds(s) }
        if let s = try options.int("request-deadline", in: 1...3600) { config.requestDeadline = .seconds(s) }
        let secret: String
        switch storage {
        case .sqlite(let path): secret = try Secrets.jwtSecret(options, database: path)
        default:
            // No database file to keep a generated secret beside: every node must be given the same one.
            guard options.sourced("secret") != nil else {
                throw CLIError(
                    "--store postgres://… needs the JWT secret from --secret or ENROUTE_JWT_SECRET (the same on "
                        + "every node)"
                )
            }
            secret = try Secrets.jwtSecret(options, database: "")
        }
        let rateLimits =
            try options.string("rate-limits").map { text in
                do { return try RateLimits.parse(text) } catch { throw CLIError("--rate-limits: \(error)") }
            } ?? .standard
        log("rate limits per account: \(rateLimits)")
        let previousSecrets = try Secrets.previousSecrets(options)
        let leeway = TimeInterval(try options.int("token-leeway", in: 0...3600) ?? 30)
        let gateway = try pushGateway(options, now: { Date() })
        let telephony = try telephony(options), calls = try callPolicy(options)

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
        var configuration = BackendConfiguration(storage: storage, secret: secret)
        configuration.previousSecrets = previousSecrets
        configuration.tokenLeeway = leeway
        configuration.rateLimits = rateLimits
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
        let publicURL = try publicURL(options, host: config.host, port: config.port)
        let (payments, webhook) = try paymentGateway(options, publicURL: publicURL)
        configuration.web.timeZone = zone
        // Links and the console's cookie follow the public URL (or, without one, where the server listens, once it
        // does), never a request's Host.
        if options.string("public-url") != nil { configuration.web.publicBaseURL = publicURL.absoluteString }
        if let leaflet = options.string("leaflet-dir") { configuration.web.leafletDirectory = leaflet }
        Self.checkLeaflet(configuration.web.leafletDirectory)
        configuration.calls = calls
        configuration.proofDirectory = options.string("proof-dir")
        if case .postgres = storage {
            if configuration.proofDirectory == nil { configuration.proofDirectory = "./enroute.blobs" }
            // Several nodes on one database agree on when an offer or a lease ran out by its clock, not theirs.
            configuration.databaseClockDecidesOfferExpiry = true
        }
        var effects = BackendEffects.system(
            push: gateway, roads: roads, roadSpeeds: speeds, payments: payments, paymentWebhook: webhook,
            log: { log($0) })
        effects.telephony = telephony
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
        let backend = try Backend(configuration, effects: effects)
        // The active trips are loaded before anything listens; trips still waiting for a provider when
        // the server stopped are searched for again; the push outbox resumes whatever is due.
        let released = try await backend.start()
        if released > 0 { log("released \(released) idempotency key(s) left in flight by the previous run") }
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
            "listening on http://\(config.host):\(server.port) (\(Self.describe(storage)), schema "
                + "v\(backend.schemaVersion ?? 0))"
        )
        let budget = server.budget
        let raised = descriptors.after > descriptors.before ? " (raised from \(descriptors.before))" : ""
        log(
            "connections: at most \(budget.connectionCap) (asked \(config.connectionLimit)); descriptor limit "
                + "\(descriptors.after)\(raised), \(budget.reserve) kept for the process and for telling newcomers "
                + "over the cap 503")

        // What a burst freed goes back to the system (a burst of searching rides otherwise holds its peak).
        let trim = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(30))
                ProcessMemory.trim()
            }
        }
        // The starter's end stops the server as a signal would (checked each second: no event tells of another
        // process's end).
        let parentWatch = try options.int("parent-pid", in: 1...Int(Int32.max)).map { pid in
            let watch = ParentWatch(pid: Int32(pid))
            log("stopping when process \(pid) is gone")
            return Task {
                while !Task.isCancelled, watch.isAlive() { try? await Task.sleep(for: .seconds(1)) }
                guard !Task.isCancelled else { return }
                log("process \(pid) is gone")
                stop.continuation.yield(SIGTERM)
            }
        }
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
        _ = sources
        _ = roads
        return 0
    }

    /// `--public-url`: an http(s) base URL with a host; by default where the server listens.
    static func publicURL(_ options: Options, host: String, port: UInt16) throws -> URL {
        guard let (text, source) = options.sourced("public-url") else {
            return URL(string: "http://\(host == "0.0.0.0" ? "127.0.0.1" : host):\(port)")!
        }
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
            throw CLIError("\(source): \(text) is not an http(s) URL with a host")
        }
        return url
    }

    /// The gateway `--payments` names, and the webhook verifier that goes with it.
    static func paymentGateway(
        _ options: Options, publicURL: URL
    ) throws
        -> (any PaymentGateway, (@Sendable ([UInt8], String?) throws -> GatewayEvent)?)
    {
        let choice = options.sourced("payments")
        switch choice?.value ?? "sandbox" {
        case "sandbox":
            if options.string("stripe-url") != nil { throw CLIError("--stripe-url needs --payments stripe") }
            log(
                "payments: the in-process sandbox (Stripe's test payment methods; bank challenges at "
                    + "\(APIPath.Template.sandboxChallenge))"
            )
            return (SandboxGateway(baseURL: publicURL, ids: RandomIDGenerator(), now: { Date() }), nil)
        case "stripe":
            guard let key = options.secret("ENROUTE_STRIPE_KEY") else {
                throw CLIError("--payments stripe needs the secret key in ENROUTE_STRIPE_KEY (sk_test_… or sk_live_…)")
            }
            guard key.hasPrefix("sk_") || key.hasPrefix("rk_") else {
                throw CLIError("ENROUTE_STRIPE_KEY must be a secret or restricted key (sk_… or rk_…)")
            }
            var base = URL(string: "https://api.stripe.com")!
            if let (text, source) = options.sourced("stripe-url") {
                guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                    throw CLIError("\(source): \(text) is not an http(s) URL with a host")
                }
                base = url
            }
            let secrets = (options.secret("ENROUTE_STRIPE_WEBHOOK_SECRET") ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }.filter { !$0.isEmpty }
            if let bad = secrets.first(where: { !$0.hasPrefix("whsec_") }) {
                throw CLIError(
                    "ENROUTE_STRIPE_WEBHOOK_SECRET: \(bad.prefix(6))… is not a webhook signing secret (whsec_…)")
            }
            let gateway = StripeGateway(
                configuration: StripeConfiguration(secretKey: key, returnURL: publicURL, baseURL: base),
                client: CurlHTTPClient(), retry: StripeRetryPolicy(sleep: { try await Task.sleep(for: $0) }))
            log(
                "payments: Stripe at \(base)"
                    + (secrets.isEmpty
                        ? " (no webhook secret: /v1/payments/webhooks/stripe answers 404)"
                        : ", \(secrets.count) webhook secret(s)"))
            let webhook: (@Sendable ([UInt8], String?) throws -> GatewayEvent)? =
                secrets.isEmpty
                ? nil
                : { @Sendable body, header in
                    try StripeWebhookVerifier.verify(payload: body, header: header, secrets: secrets, now: Date())
                }
            return (gateway, webhook)
        case let other:
            throw CLIError("\(choice?.source ?? "--payments"): \(other) is not a gateway (sandbox or stripe)")
        }
    }

    /// `--node`, or host-pid.
    static func nodeName(_ options: Options) throws -> String {
        guard let (name, source) = options.sourced("node") else {
            return "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)"
        }
        guard !name.isEmpty, name.count <= 64,
            name.unicodeScalars.allSatisfy({
                CharacterSet.alphanumerics.contains($0) && $0.isASCII || $0 == "-" || $0 == "_"
            })
        else {
            throw CLIError("\(source) must be 1 to 64 letters, digits, '-' or '_', got '\(name)'")
        }
        return name
    }

    /// The cities from `--cities FILE`, one city everywhere when none is given.
    static func cities(_ options: Options) throws -> Cities {
        guard let (path, source) = options.sourced("cities") else { return .everywhere }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError("\(source): cannot read \(path)")
        }
        do { return try Cities.load(geoJSON: data) } catch { throw CLIError("\(source) \(path): \(error)") }
    }

    /// The service area's zone from `--time-zone`, UTC when none is given.
    static func timeZone(_ options: Options) throws -> TimeZone {
        guard let (name, source) = options.sourced("time-zone") else { return TimeZone(identifier: "UTC")! }
        guard let zone = TimeZone(identifier: name) else {
            throw CLIError("\(source) must be an IANA time zone such as Europe/Helsinki or UTC, got '\(name)'")
        }
        return zone
    }

    /// Live speeds over EnRoute's own graph unless `--live-speeds off`; nil for an external router or no roads.
    static func liveSpeeds(_ options: Options, roads: (any RoadRouting)?, timeZone: TimeZone) throws -> LiveRoadSpeeds?
    {
        let setting = options.sourced("live-speeds")
        switch setting?.value {
        case nil, "on": break
        case "off": return nil
        case let other?: throw CLIError("\(setting!.source) must be on or off, got '\(other)'")
        }
        var profile = TimeOfDaySpeeds.standard
        if let (path, source) = options.sourced("speed-table") {
            let text: String
            do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
                throw CLIError("\(source): cannot read \(path): \(error.localizedDescription)")
            }
            do { profile = try TimeOfDaySpeeds(text: text) } catch { throw CLIError("\(source): \(path): \(error)") }
        }
        guard let local = roads as? LocalRoadRouting else {
            if setting != nil || options.sourced("speed-table") != nil {
                throw CLIError(
                    "live speeds need EnRoute's own graph (--router graph --graph FILE); an external router "
                        + "keeps its own"
                )
            }
            return nil
        }
        log("road speeds: time-of-day table (\(timeZone.identifier)) and providers' fixes, applied every 30 s")
        return LiveRoadSpeeds(roads: local, profile: profile, options: .init(timeZone: timeZone), log: { log($0) })
    }

    /// Logs plainly when the maps' Leaflet is missing; the pages still work and say so where the map would be.
    /// The storage for the log: the file, or the URL without its password.
    static func describe(_ storage: BackendConfiguration.Storage) -> String {
        switch storage {
        case .memory: "in memory"
        case .sqlite(let path): "database \(path)"
        case .postgres(let url, _): "PostgreSQL " + url.replacing(/:[^:@\/]*@/, with: ":***@")
        }
    }

    /// `--store` (an SQLite path or a postgres:// URL) or `--db`; a URL of another scheme is refused by name.
    static func storage(_ options: Options) throws -> BackendConfiguration.Storage {
        guard let (store, source) = options.sourced("store") else {
            return .sqlite(path: options.string("db") ?? "./enroute.sqlite")
        }
        if options.sourced("db") != nil { throw CLIError("give the database once: \(source) or --db, not both") }
        guard let scheme = store.range(of: "://").map({ store[..<$0.lowerBound].lowercased() }) else {
            return .sqlite(path: store)
        }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw CLIError(
                "\(source): unknown scheme '\(scheme)://' (give an SQLite file path or postgres://user@host:port/db)")
        }
        return .postgres(url: store)
    }

    static func checkLeaflet(_ directory: String) {
        if !FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent("leaflet.js")) {
            log(
                "web: Leaflet not found in \(directory): the share page and /ops show no map (run "
                    + "scripts/install-web.sh or pass --leaflet-dir)"
            )
        }
    }

    /// A graph file that `--graph` names but the server cannot load.
    struct GraphError: Error, CustomStringConvertible, Equatable {
        let description: String
    }

    /// The roads the server routes on: EnRoute's graph (`--router graph`, the default, needs `--graph`), an
    /// external OSRM (`--router osrm --osrm-url URL`), or none when neither is asked for.
    static func loadRoads(
        _ options: Options, makeClient: () -> any HTTPClient = { CurlHTTPClient() }
    ) throws -> (any RoadRouting)? {
        let router = options.sourced("router")
        switch router?.0 {
        case nil, "graph":
            if let (_, source) = options.sourced("osrm-url") {
                throw CLIError("\(source) is for --router osrm, not --router graph")
            }
            if router != nil, options.sourced("graph") == nil {
                throw CLIError("--router graph needs --graph FILE (from `enroute graph build`)")
            }
            return try loadGraph(options)
        case "osrm":
            guard let (text, source) = options.sourced("osrm-url") else {
                throw CLIError(
                    "--router osrm needs --osrm-url URL, the OSRM server's base URL such as http://127.0.0.1:5000")
            }
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil,
                url.query == nil
            else {
                throw CLIError("\(source) must be an http(s) base URL such as http://127.0.0.1:5000, got '\(text)'")
            }
            if options.sourced("graph") != nil {
                throw CLIError("--graph is for --router graph; with --router osrm the roads are OSRM's")
            }
            log("roads: OSRM at \(text)")
            return OSRMRoadRouting(baseURL: url, client: makeClient())
        case let other?:
            throw CLIError("\(router!.1) must be graph or osrm, got '\(other)'")
        }
    }

    /// The road network from `--graph` as the server routes on it, nil when none is given; logs its size and load
    /// time (the file's stored hierarchy is used; a file without one has it built here, with a log line).
    static func loadGraph(_ options: Options) throws -> LocalRoadRouting? {
        guard let (path, source) = options.sourced("graph") else { return nil }
        let clock = ContinuousClock()
        let start = clock.now
        let loaded: RoadGraphFile.Loaded
        do {
            loaded = try RoadGraphFile.load(path, log: { log($0) })
        } catch {
            throw GraphError(description: "cannot load the graph file given by \(source): \(error)")
        }
        let network = loaded.network
        let roads = LocalRoadRouting(graph: .init(network: network, graph: loaded.graph, hierarchy: loaded.hierarchy))
        let elapsed = (clock.now - start).components
        let milliseconds = Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15
        log(
            "road graph \(path): \(network.nodeCount) nodes, \(network.edgeCount) edges, "
                + "\(loaded.hierarchy.shortcutCount) shortcuts"
                + " (hierarchy \(loaded.hierarchyWasStored ? "stored" : "built at load")), ready in "
                + "\(String(format: "%.1f", milliseconds)) ms"
        )
        return roads
    }

    /// The dispatcher's limits from flags and environment, defaults otherwise.
    static func dispatchPolicy(_ options: Options) throws -> DispatchPolicy {
        var policy = DispatchPolicy()
        if let s = try options.int("offer-timeout", in: 1...Int.max) { policy.offerTimeout = .seconds(s) }
        if let n = try options.int("dispatch-candidates", in: 1...Int.max) { policy.maxCandidates = n }
        if let s = try options.int("dispatch-limit", in: 1...Int.max) { policy.searchLimit = .seconds(s) }
        if let s = try options.int("delivery-retry", in: 1...Int.max) { policy.deliveryRetry = .seconds(s) }
        return policy
    }

    /// APNs when all four settings are given, a log line per push when none is.
    static func pushGateway(_ options: Options, now: @escaping @Sendable () -> Date) throws -> any PushGateway {
        let keyID = options.string("apns-key-id")
        let teamID = options.string("apns-team-id")
        let keyPath = options.string("apns-key")
        let topic = options.string("apns-topic")
        let host = try apnsHost(options)
        let caFile = options.string("apns-ca")
        let given = [keyID, teamID, keyPath, topic].compactMap { $0 }
        if given.isEmpty {
            if host != nil || caFile != nil {
                throw CLIError("--apns-url and --apns-ca need the four APNs settings as well")
            }
            log(
                "APNs is not configured: pushes are logged, not sent (see --apns-key-id, --apns-team-id, --apns-key, "
                    + "--apns-topic)"
            )
            return LogPushGateway(log: { log($0) })
        }
        guard let keyID, let teamID, let keyPath, let topic else {
            throw CLIError("APNs needs all of --apns-key-id, --apns-team-id, --apns-key and --apns-topic")
        }
        guard let pem = try? String(contentsOfFile: keyPath, encoding: .utf8) else {
            throw CLIError("cannot read the APNs key \(keyPath)")
        }
        do {
            let client = try APNsClient(
                configuration: APNsConfiguration(keyID: keyID, teamID: teamID, privateKeyPEM: pem, topic: topic),
                transport: CurlAPNsTransport(
                    hosts: host.map { [.sandbox: $0, .production: $0] } ?? [:], caFile: caFile),
                now: now, log: { log($0) })
            log(
                "APNs configured: key \(keyID), team \(teamID), topic \(topic)"
                    + (host.map { ", every push to \($0)" } ?? ""))
            return client
        } catch {
            throw CLIError("the APNs key \(keyPath) is not a P-256 .p8 key: \(error)")
        }
    }

    /// `--apns-url`: an https base URL with a host and nothing after it.
    static func apnsHost(_ options: Options) throws -> String? {
        guard let (text, source) = options.sourced("apns-url") else { return nil }
        guard let url = URL(string: text), url.scheme == "https", url.host != nil, url.path.isEmpty || url.path == "/",
            url.query == nil
        else {
            throw CLIError("\(source) must be an https base URL such as https://127.0.0.1:8443, got '\(text)'")
        }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    static func log(_ message: String) {
        FileHandle.standardError.write(
            Data("[enroute] \(ISO8601DateFormatter().string(from: Date())) \(message)\n".utf8))
    }
}
