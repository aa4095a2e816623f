import Foundation
import ClientKit
import HTTPTransport
import CurlTransport
import CitySimulator
import EnRouteAPI
import EnRouteBackend
import EnRouteDomain
import EnRouteModels
import EnRouteRoads
import HTTPEngine
import Routing

/// `enroute simulate`: a living city on the client kits against a server (embedded unless --server), in simulated time,
/// with faults; prints the report and, with --report, writes report.json and report.html.
enum SimulateCommand {
    static let spec = CommandSpec(
        name: "simulate",
        synopsis: """
            Usage: enroute simulate [--server URL] [--map FILE] [--providers N] [--demand R,O] [--speedup X] \
            [--duration D]
                                    [--seed N] [--faults SPEC] [--dispatch POLICY] [--dispatch-window S] \
            [--report DIR]
                                    [--scheduled-share F] [--delivery-assignment WHEN] [--stack-capacity N] \
            [--stack-limit S]
                                    [--rush-hour FROM-TO:FACTOR]

            Providers drive the map's roads along the router's guidance (ProviderKit), riders and shoppers \
            request rides and
            orders and watch them (RideHailing, OrderTracking), merchants accept and mark ready, all over HTTP \
            with faults in
            each device's transport; then a report of what the clients saw. Without --server an \
            embedded server
            runs on the map in simulated time (SQLite in a temporary directory, the directory seeded from the map).
            """,
        sections: [
            (
                nil,
                [
                    .value(
                        "server", "URL",
                        """
                        A running server's base URL instead of the embedded one (tokens are signed with
                        ENROUTE_JWT_SECRET; it runs in real time, so --speedup must be 1).
                        """),
                    .value(
                        "map", "FILE",
                        "The road graph (`enroute graph build`; default .demo/helsinki.graph, built if missing)."),
                    .value("providers", "N", "Providers online (default 200)."),
                    .value("demand", "R,O", "Rides and orders requested per simulated minute (default 6,6)."),
                    .value(
                        "rush-hour", "FROM-TO:FACTOR",
                        """
                        Both demand rates times FACTOR (above 0) from FROM to TO after the start, times as --duration
                        takes them (10m-20m:3; FROM may be 0); the report's demand says the profile run.
                        """),
                    .value("speedup", "X", "Simulated seconds per wall second (default 10)."),
                    .value(
                        "duration", "D",
                        """
                        Simulated time of demand: 90s, 30m, 1h (default 30m); trips under way then finish. \
                        `forever`: until
                        Ctrl-C or SIGTERM, which end the run at once (trips under way are abandoned) and \
                        print the report.
                        """),
                    .value("seed", "N", "The seed behind every random choice (default 7)."),
                    .value("faults", "SPEC", "loss=F,partition=S,every=S, or none (default none)."),
                    .value(
                        "dispatch", "POLICY",
                        """
                        The embedded server's matching: greedy (each request at once, the default) or batched
                        (gathered over --dispatch-window and matched together); not with --server.
                        """),
                    .value(
                        "dispatch-window", "S",
                        "Seconds a batched window gathers requests (default 2, 0.1 to 30); not with --server."),
                    .value(
                        "delivery-assignment", "WHEN",
                        """
                        now (a courier looked for as soon as an order is placed, the default) or late (to reach
                        the merchant as the order is ready); not with --server.
                        """),
                    .value(
                        "stack-capacity", "N",
                        "Orders a courier carries at once (default 2, 1 to 8; 1: never stacked); not with --server."),
                    .value(
                        "stack-limit", "S",
                        """
                        Seconds a stacked order may add to the order carried (default 300); not with --server.
                        """),
                    .value(
                        "scheduled-share", "F",
                        """
                        Share of rides booked ahead, 20 to 60 minutes from the request (0 to 1, default 0); the
                        report's dispatch.scheduled tells how many were matched before due and met on time.
                        """),
                    .value(
                        "report", "DIR",
                        "Also write DIR/report.json, DIR/report.html, DIR/arrivals.csv (one row per "
                            + "delivered order), DIR/booked.csv (one row per ride booked ahead), DIR/quotes.csv (each "
                            + "ride estimate's second and busy-time multiplier) and the embedded server's metrics, "
                            + "DIR/metrics.txt."
                    ),
                ]
            )
        ])

    /// The flags, checked.
    struct Settings: Equatable {
        var server: URL?
        var map: String
        var providers = 200
        var ridesPerMinute = 6.0
        var ordersPerMinute = 6.0
        var speedup = 10.0
        var durationSeconds = 1800.0
        var seed: UInt64 = 7
        var faults = FaultPlan.none
        var report: String?
        /// The embedded server's dispatch policy (its matching and window from the flags).
        var dispatch = DispatchPolicy()
        /// Share of rides booked ahead.
        var scheduledShare = 0.0
        /// How demand varies over the run.
        var profile = DemandProfile.steady
    }

    static let defaultMap = ".demo/helsinki.graph"

    static func settings(_ options: Options) throws -> Settings {
        var s = Settings(map: options.string("map") ?? defaultMap)
        if let text = options.string("server") {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw CLIError("--server must be an http(s) base URL such as http://127.0.0.1:8080, got '\(text)'")
            }
            s.server = url
        }
        s.providers = try options.int("providers", in: 1...100_000) ?? 200
        if let text = options.string("demand") {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false).map {
                Double($0.trimmingCharacters(in: .whitespaces))
            }
            guard parts.count == 2, let rides = parts[0], let orders = parts[1], rides >= 0, orders >= 0,
                rides.isFinite, orders.isFinite,
                rides + orders > 0
            else {
                throw CLIError(
                    "--demand must be RIDES,ORDERS per minute, two numbers ≥ 0 not both 0 (e.g. 6,6), got '\(text)'")
            }
            (s.ridesPerMinute, s.ordersPerMinute) = (rides, orders)
        }
        s.speedup = try options.double("speedup", in: 0.1...1000) ?? 10
        if let text = options.string("duration") {
            guard let seconds = text == "forever" ? .infinity : parseDuration(text) else {
                throw CLIError("--duration must be a time such as 90s, 30m or 1h, or forever, got '\(text)'")
            }
            s.durationSeconds = seconds
        }
        if let text = options.string("seed") {
            guard let seed = UInt64(text) else { throw CLIError("--seed must be a whole number ≥ 0, got '\(text)'") }
            s.seed = seed
        }
        if let text = options.string("faults") {
            do { s.faults = try FaultPlan.parse(text) } catch { throw CLIError(error.description) }
        }
        if let text = options.string("rush-hour") {
            s.profile = DemandProfile(rushHour: try parseRushHour(text, duration: s.durationSeconds))
        }
        s.report = options.string("report")
        s.scheduledShare = try options.double("scheduled-share", in: 0...1) ?? 0
        if s.server != nil, let flag = ServeCommand.matchingFlags.first(where: { options.string($0) != nil }) {
            throw CLIError(
                "--\(flag) cannot be used with --server: a running server dispatches by its own policy (give it to "
                    + "enroute serve)")
        }
        try ServeCommand.readMatching(options, into: &s.dispatch)
        if s.server != nil, s.speedup != 1 {
            throw CLIError(
                "--speedup must be 1 with --server: a running server keeps real time (only the embedded server runs on "
                    + "the simulator's clock)"
            )
        }
        return s
    }

    /// `FROM-TO:FACTOR` (`10m-20m:3`): times as `--duration` takes them (FROM may also be 0), FROM before TO and
    /// before the end of `duration`, FACTOR above 0.
    static func parseRushHour(_ text: String, duration: Double) throws -> DemandProfile.RushHour {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        let times = parts.first?.split(separator: "-", omittingEmptySubsequences: false) ?? []
        func time(_ part: Substring) -> Double? { part == "0" ? 0 : parseDuration(String(part)) }
        guard parts.count == 2, times.count == 2, let from = time(times[0]), let to = time(times[1]), from < to,
            let factor = Double(parts[1]), factor.isFinite, factor > 0
        else {
            throw CLIError(
                "--rush-hour must be FROM-TO:FACTOR, two times such as 10m or 90s (FROM before TO) and a factor above "
                    + "0 (e.g. 10m-20m:3), got '\(text)'")
        }
        guard from < duration else {
            throw CLIError(
                "--rush-hour starts at \(Int(from)) s, not before the end of --duration (\(Int(duration)) s), got "
                    + "'\(text)'")
        }
        return .init(fromSecond: from, toSecond: to, factor: factor)
    }

    /// `90s`, `30m`, `1h`, or plain seconds; positive, at most a day.
    static func parseDuration(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        var number = Substring(text), unit = 1.0
        if let last = text.last, let factor = units[last] { number = text.dropLast(); unit = factor }
        guard let value = Double(number), value.isFinite, value > 0, value * unit <= 86_400 else { return nil }
        return value * unit
    }

    static func run(_ args: [String]) async throws -> Int32 {
        let options = try spec.parse(args)
        if options.has("help") { print(spec.helpText); return 0 }
        let settings = try settings(options)
        let interrupts = catchInterrupts()
        let roads = try loadMap(settings.map)
        let city = CityMap(roads.graph.network, mainComponent: roads.graph.mainComponent, seed: settings.seed)
        let storeDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "enroute-simulate-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: storeDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: storeDirectory) }
        log(
            "map \(settings.map): \(city.places.count) places, \(city.merchants.count) merchants, time zone "
                + "\(city.timeZone.identifier)"
        )

        let target = try await connect(settings, city: city, roads: roads, storeDirectory: storeDirectory)
        let embedded = target.embedded
        let zone = city.timeZone
        var localCalendar = Calendar(identifier: .gregorian)
        localCalendar.timeZone = zone
        let calendar = localCalendar
        let context = SimulationContext(
            baseURL: target.baseURL, makeTransport: { CurlHTTPClient() }, token: target.token, clock: target.clock,
            dates: target.dates, start: target.start,
            seed: settings.seed, faults: settings.faults, faultSwitch: FaultSwitch(),
            speeds: SpeedModel(seed: settings.seed),
            hour: { calendar.component(.hour, from: $0) }, places: city.places, merchants: city.merchants,
            storeDirectory: storeDirectory, log: ObservationLog())
        let plan = CitySimulation.Plan(
            providers: settings.providers, ridesPerMinute: settings.ridesPerMinute,
            ordersPerMinute: settings.ordersPerMinute, durationSeconds: settings.durationSeconds,
            scheduledShare: settings.scheduledShare, profile: settings.profile)
        let span = settings.durationSeconds.isFinite ? "\(Int(settings.durationSeconds / 60)) min" : "until Ctrl-C"
        log(
            "simulating \(span) at \(settings.speedup)× with \(settings.providers) providers,"
                + " demand \(settings.ridesPerMinute),\(settings.ordersPerMinute)/min, faults \(settings.faults), seed "
                + "\(settings.seed)"
                + (settings.server == nil ? ", dispatch \(settings.dispatch.matching.rawValue)" : "")
                + (settings.scheduledShare > 0 ? ", \(settings.scheduledShare * 100)% of rides booked ahead" : "")
        )
        if settings.profile.rushHour != nil { log("demand: \(plan.demand.text)") }
        let simulation = await CitySimulation(plan: plan, context: context, inspection: embedded, progress: { log($0) })
        // A signal ends the run early and the report still comes; more signals change nothing (a script may send its
        // own after the terminal's Ctrl-C reached the whole process group).
        let stopper = Task { @MainActor in
            var signals = interrupts.makeAsyncIterator()
            guard let first = await signals.next() else { return }
            log("received signal \(first); stopping")
            simulation.stop()
        }
        defer { stopper.cancel() }
        let (report, seen) = try await simulation.run()
        await embedded?.stop()
        print(report.table(seen))
        if let directory = settings.report {
            try writeReport(
                report, seen, metrics: embedded?.backend.metrics.render(), to: directory,
                title:
                    "EnRoute city simulation · \(URL(fileURLWithPath: settings.map).lastPathComponent) · seed "
                    + "\(settings.seed)"
            )
            log(
                "wrote \(directory)/report.json and \(directory)/report.html"
                    + (embedded == nil ? "" : " and the embedded server's \(directory)/metrics.txt"))
        }
        return 0
    }

    /// The server the city runs against: its base URL, how each party's token is signed, and the clock, dates and
    /// start the simulation keeps (simulated for the embedded server, real for a running one).
    struct Target {
        var clock: any Clock<Duration>
        var dates: any DateProvider
        var start: Date
        var embedded: EmbeddedServer?
        var baseURL: URL
        var token: @Sendable (String, SimulatedRole) throws -> String
    }

    /// With `--server`, the running server, seeded with the map's merchants and providers; else the embedded
    /// server started on the map in simulated time.
    static func connect(
        _ settings: Settings, city: CityMap, roads: LocalRoadRouting, storeDirectory: URL
    ) async throws -> Target {
        guard let url = settings.server else {
            let simulated = SimulatedClock(speedup: settings.speedup, start: city.startDate)
            let server = try await EmbeddedServer.start(
                roads: roads, city: city, clock: simulated, now: { simulated.date },
                directory: storeDirectory, seed: settings.seed, dispatch: settings.dispatch)
            return Target(
                clock: simulated, dates: simulated.dates, start: simulated.date, embedded: server,
                baseURL: server.baseURL, token: { try server.backend.auth.token(account: $0, role: Party($1)) })
        }
        let system = SystemDateProvider()
        let start = system.now()
        guard let secret = ProcessInfo.processInfo.environment["ENROUTE_JWT_SECRET"], secret.utf8.count >= 16 else {
            throw CLIError(
                "--server needs ENROUTE_JWT_SECRET, the server's token secret (at least 16 bytes), to sign each "
                    + "party's token"
            )
        }
        let auth = Authenticator(secret: secret, now: { Date() })
        let token: @Sendable (String, SimulatedRole) throws -> String = { try auth.token(account: $0, role: Party($1)) }
        try await seedRemote(city, providers: settings.providers, baseURL: url, token: token)
        return Target(
            clock: ContinuousClock(), dates: system, start: start, embedded: nil, baseURL: url, token: token)
    }

    /// SIGINT and SIGTERM as a stream, caught from now on instead of ending the process.
    static func catchInterrupts() -> AsyncStream<Int32> {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        SignalCatcher.start([SIGINT, SIGTERM], into: continuation)
        return stream
    }

    static func writeReport(
        _ report: SimulationReport, _ seen: SimulationObservations, metrics: String?, to directory: String,
        title: String
    ) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if let metrics {
            try Data(metrics.utf8).write(to: URL(fileURLWithPath: directory).appendingPathComponent("metrics.txt"))
        }
        try report.json().write(to: URL(fileURLWithPath: directory).appendingPathComponent("report.json"))
        try Data(report.html(seen, title: title).utf8).write(
            to: URL(fileURLWithPath: directory).appendingPathComponent("report.html"))
        try Data(SimulationReport.arrivalsCSV(seen).utf8).write(
            to: URL(fileURLWithPath: directory).appendingPathComponent("arrivals.csv"))
        try Data(report.quotesCSV().utf8).write(
            to: URL(fileURLWithPath: directory).appendingPathComponent("quotes.csv"))
        if !seen.bookedRides.isEmpty {
            try Data(SimulationReport.bookedCSV(seen).utf8).write(
                to: URL(fileURLWithPath: directory).appendingPathComponent("booked.csv"))
        }
    }

    /// The graph at `path`; the demo city's is built from data/osm first when it is the default and missing.
    static func loadMap(_ path: String) throws -> LocalRoadRouting {
        if path == defaultMap, !FileManager.default.fileExists(atPath: path) {
            log("building the demo city's graph \(path)")
            try FileManager.default.createDirectory(atPath: ".demo", withIntermediateDirectories: true)
            _ = try GraphCommand.run(
                ["build", "--osm", "data/osm/Helsinki-clean.osm.pbf", "--out", path], print: { log($0) })
        }
        let loaded: RoadGraphFile.Loaded
        do { loaded = try RoadGraphFile.load(path, log: { log($0) }) } catch {
            throw CLIError("--map: cannot load the graph file \(path): \(error)")
        }
        return LocalRoadRouting(graph: .init(network: loaded.network, graph: loaded.graph, hierarchy: loaded.hierarchy))
    }

    /// With --server: the map's merchants and the first `providers` provider profiles written through the ops API
    /// (PUT /v1/ops/merchants/{id}, /v1/ops/providers/{id}), waiting out the server's rate limit when it answers 429.
    static func seedRemote(
        _ city: CityMap, providers: Int, baseURL: URL, token: @Sendable (String, SimulatedRole) throws -> String
    ) async throws {
        let http = CurlHTTPClient()
        let ops = APIServer(baseURL: baseURL, credentials: StaticAccessToken(try token("sim-ops", .ops)))
        func put(_ path: String, _ body: some Encodable & Sendable, what: String) async throws {
            while true {
                let response = try await http.send(try await ops.request("PUT", path, json: body))
                if response.status == 429, let wait = response.header("Retry-After").flatMap(Int.init), wait <= 60 {
                    log("--server: rate limited while seeding; waiting \(wait) s")
                    try await Task.sleep(for: .seconds(max(1, wait)))
                    continue
                }
                guard (200..<300).contains(response.status) else {
                    throw CLIError(
                        "--server: could not seed \(what) (status \(response.status): "
                            + "\(String(decoding: response.body, as: UTF8.self)))"
                    )
                }
                return
            }
        }
        for merchant in city.directory.merchants {
            try await put("/v1/ops/merchants/\(merchant.id)", merchant, what: "merchant \(merchant.id)")
        }
        for profile in city.directory.providers.prefix(providers) {
            try await put("/v1/ops/providers/\(profile.id)", profile, what: "provider \(profile.id)")
        }
    }

    static func log(_ message: String) { FileHandle.standardError.write(Data("simulate: \(message)\n".utf8)) }
}

extension Party {
    /// The server's role for a simulated party (the same names).
    init(_ role: SimulatedRole) {
        switch role {
        case .customer: self = .customer
        case .provider: self = .provider
        case .merchant: self = .merchant
        case .ops: self = .ops
        }
    }
}
