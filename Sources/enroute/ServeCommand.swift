import Foundation
import HTTPEngine
import EnRouteBackend
import EnRouteLogging
import Synchronization

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
                        "dispatch", "POLICY", env: "ENROUTE_DISPATCH",
                        """
                        greedy (each request offered to its best provider at once; the default) or batched
                        (a city's requests gathered over --dispatch-window and matched together) (ENROUTE_DISPATCH).
                        """),
                    .value(
                        "dispatch-window", "S", env: "ENROUTE_DISPATCH_WINDOW",
                        "Seconds a batched window gathers requests (ENROUTE_DISPATCH_WINDOW, default 2, 0.1 to 30)."),
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
                        "delivery-assignment", "WHEN", env: "ENROUTE_DELIVERY_ASSIGNMENT",
                        """
                        now (a courier looked for as soon as an order is placed; the default) or late (so that
                        the courier reaches the merchant as the order is ready) (ENROUTE_DELIVERY_ASSIGNMENT).
                        """),
                    .value(
                        "stack-capacity", "N", env: "ENROUTE_STACK_CAPACITY",
                        "Orders a courier carries at once (ENROUTE_STACK_CAPACITY, default 2; 1: never stacked)."),
                    .value(
                        "stack-limit", "S", env: "ENROUTE_STACK_LIMIT",
                        """
                        Seconds a stacked order may add to the order carried, or cost its own customer against
                        a courier of its own (ENROUTE_STACK_LIMIT, default 300).
                        """),
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
                        "log-format", "F", env: "ENROUTE_LOG_FORMAT",
                        """
                        How log lines are written (ENROUTE_LOG_FORMAT): text (default; time, level, label, message,
                        key=value fields) or json (one object per line, for a log pipeline).
                        """),
                    .value(
                        "log-level", "L", env: "ENROUTE_LOG_LEVEL",
                        """
                        The least level logged (ENROUTE_LOG_LEVEL): trace, debug, info (default), notice, warning,
                        error or critical.
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

    /// Starts the backend and the server from the options, serves until a signal, then drains.
    static func run(_ args: [String]) async throws -> Int32 {
        let options = try spec.parse(args)
        if options.has("help") { print(spec.helpText); return 0 }
        let handler = try logHandler(options)
        logger.withLock { $0 = Logger(label: "enroute", handler: handler) }
        ProcessMemory.limitArenas()
        // Every connection is a descriptor: take all the kernel allows before anything is opened.
        let descriptors = DescriptorLimit.raiseToHard()
        // The graph loads before anything is opened or listens, so a bad file leaves nothing behind.
        let roads = try loadRoads(options)
        let settings = try settings(options)
        // Signals are caught before anything listens, so a SIGTERM at any moment drains cleanly.
        let stop = AsyncStream<Int32>.makeStream()
        catchSignals(into: stop.continuation)
        let (configured, services) = try backendConfiguration(options, settings: settings, roads: roads)
        var configuration = configured
        let effects = try backendEffects(
            options, settings: settings, roads: roads, services: services, configuration: &configuration)
        let backend = try Backend(configuration, effects: effects)
        // The active trips are loaded before anything listens; trips still waiting for a provider when
        // the server stopped are searched for again; the push outbox resumes whatever is due.
        let released = try await backend.start()
        if released > 0 { log("released \(released) idempotency key(s) left in flight by the previous run") }
        let server = try startServer(
            options, settings: settings, backend: backend, payments: services.payments, descriptors: descriptors)
        try await serveUntilStopped(options, server: server, backend: backend, stop: stop)
        _ = roads
        return 0
    }

    /// The process's log, set from `--log-format` and `--log-level` before anything else runs; the backend logs
    /// through it too.
    static let logger = Mutex(
        Logger(label: "enroute", handler: StreamLogHandler.standardError(format: .text, now: { Date() })))

    /// Writes one of the command's own lines (`level`, info by default).
    static func log(_ message: String, level: Logger.Level = .info) {
        logger.withLock { $0 }.log(level: level, Logger.Message(message))
    }

    /// Lines to standard error in `--log-format`, from `--log-level` up.
    static func logHandler(_ options: Options) throws -> StreamLogHandler {
        var format = LogFormat.text, level = Logger.Level.info
        if let (text, source) = options.sourced("log-format") {
            guard let chosen = LogFormat(rawValue: text) else {
                throw CLIError("\(source) must be text or json, got '\(text)'")
            }
            format = chosen
        }
        if let (text, source) = options.sourced("log-level") {
            guard let chosen = Logger.Level(rawValue: text) else {
                let levels = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
                throw CLIError("\(source) must be one of \(levels), got '\(text)'")
            }
            level = chosen
        }
        return StreamLogHandler.standardError(format: format, level: level, now: { Date() })
    }
}
