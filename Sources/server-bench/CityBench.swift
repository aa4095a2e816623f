import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import EnRouteAPI
import EnRouteModels

/// `server-bench city`: one city's load on a running `enroute serve` (bench/city.sh).
///
/// Setup, not measured: `--trips T` customers each save the sandbox card, take a quote, request a ride and have ops
/// assign it to provider `city-p<i>`; then `--providers P` providers go online at seeded positions in Helsinki;
/// then `--watchers W` SSE watchers open `GET /v1/trips/{id}/events`, spread evenly over the trips.
/// Measured for `--seconds S` after one warm-up period: every provider posts one location batch every
/// `--period` seconds (phases spread evenly) over `--senders` keep-alive connections, and every watcher's
/// `driverMoved` is timed from the fix's `recordedAt` (this process's wall clock, whole milliseconds, so up to
/// 1 ms high) to the moment this process reads it. Tokens are signed here with the server's secret
/// (`--secret` or ENROUTE_JWT_SECRET). The client runs on the same cores as the server: its CPU is reported.
/// Deliveries over 50 ms are grouped in bursts (one burst across many trips is the server pausing), beside the
/// reader's longest turn (a pause of this client); a POST more than a second behind its schedule counts as late.
struct CityBench {
    let port: UInt16
    let secret: String
    let serverPID: Int32
    let providers: Int
    let trips: Int
    let watchers: Int
    let seconds: Double
    let period: Double
    let senders: Int
    let setupWorkers: Int
    let seed: UInt64

    init(_ args: BenchArguments) {
        port = UInt16(args.int("port", 18_400))
        secret = args.string("secret", ProcessInfo.processInfo.environment["ENROUTE_JWT_SECRET"] ?? "")
        serverPID = Int32(args.int("pid", 0))
        providers = args.int("providers", 1_000)
        trips = args.int("trips", 300)
        watchers = args.int("watchers", 600)
        seconds = args.double("seconds", 40)
        period = args.double("period", 5)
        senders = max(1, args.int("senders", 64))
        setupWorkers = max(1, args.int("setup-workers", 8))
        seed = UInt64(args.int("seed", 17))
    }

    /// Central Helsinki: where providers start and rides go.
    static let south = 60.155, north = 60.205, west = 24.89, east = 24.99

    typealias Failure = FanoutBench.Failure

    func run() throws {
        try checkSetup()
        let auth = Authenticator(secret: secret, now: { Date() })
        let ops = try auth.token(account: "city-ops", role: .ops, lifetime: 86_400)
        var rng = SplitMix64(seed: seed)
        func uniform(_ a: Double, _ b: Double) -> Double { a + (b - a) * Double(rng.next() >> 11) / Double(1 << 53) }
        let positions = (0..<providers).map { _ in
            (lat: uniform(Self.south, Self.north), lng: uniform(Self.west, Self.east))
        }
        let providerTokens = try (0..<providers).map {
            try auth.token(account: "city-p\($0)", role: .provider, lifetime: 86_400)
        }
        let started = Percentiles.now()
        let firstError = FirstError()
        let live = try createTrips(auth: auth, ops: ops, positions: positions, firstError: firstError)
        let afterTrips = Percentiles.now()
        try bringOnline(providerTokens: providerTokens, positions: positions, firstError: firstError)
        let afterOnline = Percentiles.now()
        let watch = try openWatchers(live)
        let afterWatchers = Percentiles.now()
        print(
            String(
                format:
                    "city: %d providers online, %d live trips, %d watchers; setup %.1f s (trips %.1f, online %.1f, "
                    + "watchers %.1f)",
                providers, trips, watchers, afterWatchers - started, afterTrips - started, afterOnline - afterTrips,
                afterWatchers - afterOnline))
        let load = measureLoad(
            watch: watch, providerTokens: providerTokens, positions: positions, firstError: firstError)
        report(load, watch: watch)
        if let error = firstError.message { throw Failure(description: error) }
    }

    /// Refuses a run that cannot work: no secret, more trips than providers, or more sockets than this process may
    /// open (every watcher and sender is one; said before the server is loaded).
    private func checkSetup() throws {
        guard secret.utf8.count >= 16 else {
            throw Failure(
                description: "city needs the server's secret: --secret or ENROUTE_JWT_SECRET (16 bytes or more)")
        }
        guard trips <= providers, trips > 0, watchers >= 0 else {
            throw Failure(description: "need 0 < trips <= providers")
        }
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let needed = watchers + senders + setupWorkers + 64
        guard needed <= Int(limit.rlim_cur) else {
            throw Failure(
                description:
                    "fds: \(needed) descriptors needed in the client, RLIMIT_NOFILE is \(limit.rlim_cur) (hard "
                    + "\(limit.rlim_max))"
            )
        }
    }

    /// The live trips: each trip's id and its customer's token.
    struct LiveTrips {
        var ids: [String]
        var customerTokens: [String]
    }

    /// 1. Live trips: each with its own customer, assigned by ops to provider i (no dispatch round).
    private func createTrips(
        auth: Authenticator, ops: String, positions: [(lat: Double, lng: Double)], firstError: FirstError
    ) throws -> LiveTrips {
        let tripIds = Mutex<[String]>(Array(repeating: "", count: trips))
        let customerTokens = Mutex<[String]>(Array(repeating: "", count: trips))
        parallel(setupWorkers) { w in
            do {
                let c = try FanoutBench.Connection(port: port)
                for i in stride(from: w, to: trips, by: setupWorkers) {
                    if firstError.message != nil { return }
                    let token = try auth.token(account: "city-c\(i)", role: .customer, lifetime: 86_400)
                    try c.addCard(token: token)
                    let p = positions[i]
                    let ride = try c.quotedRide(
                        token: token, pickup: Self.json(p.lat + 0.002, p.lng + 0.003),
                        dropoff: Self.json(p.lat - 0.01, p.lng + 0.02))
                    let created = try c.request(
                        "POST", "/v1/trips", token: token, headers: ["Idempotency-Key": "city-\(serverPID)-\(i)"],
                        body: ride)
                    guard created.status == 201, let id = FanoutBench.field("id", in: created.body) else {
                        throw Failure(description: "create ride \(i): \(created.status) \(created.body.prefix(200))")
                    }
                    let assigned = try c.request(
                        "POST", "/v1/ops/trips/\(id)/assign", token: ops, body: #"{"providerId":"city-p\#(i)"}"#)
                    guard assigned.status == 200 else {
                        throw Failure(description: "assign \(i): \(assigned.status) \(assigned.body.prefix(200))")
                    }
                    tripIds.withLock { $0[i] = id }
                    customerTokens.withLock { $0[i] = token }
                }
            } catch {
                firstError.record("setup: \(error)")
            }
        }
        if let error = firstError.message { throw Failure(description: error) }
        return LiveTrips(ids: tripIds.withLock { $0 }, customerTokens: customerTokens.withLock { $0 })
    }

    /// 2. Every provider online where it stands.
    private func bringOnline(
        providerTokens: [String], positions: [(lat: Double, lng: Double)], firstError: FirstError
    ) throws {
        parallel(setupWorkers) { w in
            do {
                let c = try FanoutBench.Connection(port: port)
                for i in stride(from: w, to: providers, by: setupWorkers) {
                    let r = try c.request(
                        "POST", "/v1/provider/availability", token: providerTokens[i],
                        body: #"{"online":true,"position":\#(Self.json(positions[i].lat, positions[i].lng))}"#)
                    guard r.status == 200 else {
                        throw Failure(description: "online \(i): \(r.status) \(r.body.prefix(200))")
                    }
                }
            } catch {
                firstError.record("online: \(error)")
            }
        }
        if let error = firstError.message { throw Failure(description: error) }
    }

    /// 3. The watchers, watcher j on trip j % T, each as that trip's rider, opened 500 at a time.
    private func openWatchers(_ live: LiveTrips) throws -> Watchers {
        let watch = Watchers(capacity: watchers)
        while watch.count < watchers {
            let chunk = min(500, watchers - watch.count)
            for _ in 0..<chunk {
                let trip = watch.count % trips
                try watch.open(
                    port: port, trip: trip,
                    request:
                        "GET /v1/trips/\(live.ids[trip])/events HTTP/1.1\r\nHost: bench\r\nAccept: "
                        + "text/event-stream\r\nAuthorization: Bearer \(live.customerTokens[trip])\r\n\r\n"
                )
            }
            let chunkEnd = Percentiles.now() + 15
            while watch.opened < watch.count, Percentiles.now() < chunkEnd { watch.pump(timeoutMs: 100, window: nil) }
            guard watch.opened == watch.count else {
                throw Failure(
                    description:
                        "watchers: only \(watch.opened) of \(watch.count) streams opened (\(watch.closed) closed by "
                        + "the server)"
                )
            }
        }
        return watch
    }

    /// When the load runs: it starts at `t0`, is counted from `warmupEnd` to `loadEnd`; wall = monotonic + offset.
    struct Schedule {
        var t0: Double
        var warmupEnd: Double
        var loadEnd: Double
        var wallOffset: Double
        /// The fixes counted: recordedAt in ms since 1970.
        var window: (Double, Double)
    }

    /// CPU ticks of the server, of this client and of the whole machine.
    struct CPUTicks {
        var server: Int
        var client: Int
        var machine: (busy: Int, total: Int)

        init(serverPID: Int32) {
            (server, client, machine) = (
                CityBench.cpuTicks(serverPID), CityBench.cpuTicks(getpid()), CityBench.machineTicks()
            )
        }
    }

    /// What the measured load did: the senders' figures, the watchers' reader's, and the CPU used.
    struct Load {
        var schedule: Schedule
        var sent: SendStats
        var peakRSS: Int
        /// The reader's longest turn after the warm-up and when it ended, in seconds.
        var longestTurn: (Double, Double)
        var cpuStart: CPUTicks
        var cpuEnd: CPUTicks
    }

    /// 4. The load. Wall time (for recordedAt) and monotonic time (for the schedule) are both read here.
    private func measureLoad(
        watch: Watchers, providerTokens: [String], positions: [(lat: Double, lng: Double)], firstError: FirstError
    ) -> Load {
        let t0 = Percentiles.now() + 0.2
        let warmupEnd = t0 + period, loadEnd = warmupEnd + seconds
        let wallOffset = Self.wallNow() - Percentiles.now()  // wall = monotonic + offset
        let window = ((warmupEnd + wallOffset) * 1000, (loadEnd - 1 + wallOffset) * 1000)  // recordedAt in ms, counted
        let schedule = Schedule(
            t0: t0, warmupEnd: warmupEnd, loadEnd: loadEnd, wallOffset: wallOffset, window: window)
        let stats = Mutex<SendStats>(SendStats())
        let cpuStart = CPUTicks(serverPID: serverPID)
        let senderGroup = DispatchGroup()
        for s in 0..<senders {
            senderGroup.enter()
            let mine = Array(stride(from: s, to: providers, by: senders))
            let start = mine.map { positions[$0] }
            Thread.detachNewThread { [self] in
                defer { senderGroup.leave() }
                let local = send(
                    mine, from: start, providerTokens: providerTokens, schedule: schedule, firstError: firstError)
                stats.withLock { $0.merge(local) }
            }
        }
        let (peakRSS, longestTurn) = read(watch, schedule: schedule)
        let cpuEnd = CPUTicks(serverPID: serverPID)
        senderGroup.wait()
        return Load(
            schedule: schedule, sent: stats.withLock { $0 }, peakRSS: peakRSS, longestTurn: longestTurn,
            cpuStart: cpuStart, cpuEnd: cpuEnd)
    }

    /// One sender: each of `mine` posts one fix every period, at its phase, over one keep-alive connection; the
    /// fixes recorded inside the window are counted.
    private func send(
        _ mine: [Int], from start: [(lat: Double, lng: Double)], providerTokens: [String], schedule: Schedule,
        firstError: FirstError
    ) -> SendStats {
        let (t0, loadEnd, wallOffset, window) = (schedule.t0, schedule.loadEnd, schedule.wallOffset, schedule.window)
        var local = SendStats()
        var place = start
        do {
            let c = try FanoutBench.Connection(port: port)
            var round = 0
            outer: while true {
                for (k, p) in mine.enumerated() {
                    let due = t0 + Double(round) * period + period * Double(p) / Double(providers)
                    if due >= loadEnd { break outer }
                    let now = Percentiles.now()
                    if due > now { usleep(useconds_t((due - now) * 1e6)) }
                    let sent = Percentiles.now()
                    // About 2 m/s north-east: plausible to the server's checks.
                    place[k].lat += 0.00009; place[k].lng += 0.00009
                    let ms = ((sent + wallOffset) * 1000).rounded(.down)
                    let at = EnRouteModels.ISO8601.format(Date(timeIntervalSince1970: ms / 1000))
                    let body =
                        #"{"batchId":"b\#(p)-\#(round)","fixes":[{"lat":\#(place[k].lat),"#
                        + #""lng":\#(place[k].lng),"heading":45,"speed":2,"accuracy":5,"#
                        + #""recordedAt":"\#(at)"}]}"#
                    let r = try c.request("POST", "/v1/provider/locations", token: providerTokens[p], body: body)
                    let took = Percentiles.now() - sent
                    if ms >= window.0, ms <= window.1 {
                        if sent - due > 1 { local.late += 1 }
                        local.latencies.append(took)
                        if r.status != 200 {
                            local.errors += 1
                        } else if p < trips {
                            local.expected += (watchers / trips) + (p < watchers % trips ? 1 : 0)
                        }
                    }
                }
                round += 1
            }
        } catch {
            local.errors += 1
            firstError.record("fixes: \(error)")
        }
        return local
    }

    /// The watchers read on this thread until the last fix has had a second to arrive, the server's RSS sampled
    /// each second; the peak RSS and the reader's longest turn.
    private func read(_ watch: Watchers, schedule: Schedule) -> (peakRSS: Int, longestTurn: (Double, Double)) {
        var peakRSS = 0
        var nextSample = 0.0
        var lastTurn = Percentiles.now(), longestTurn = (0.0, 0.0)
        while Percentiles.now() < schedule.loadEnd + 1 {
            watch.pump(timeoutMs: 20, window: schedule.window, wallOffset: schedule.wallOffset)
            let turn = Percentiles.now()
            if turn - lastTurn > longestTurn.0, turn > schedule.warmupEnd {
                longestTurn = (turn - lastTurn, turn - schedule.t0)
            }
            lastTurn = turn
            if Percentiles.now() >= nextSample {
                peakRSS = max(peakRSS, SoakBench.rssKiB(serverPID))
                nextSample = Percentiles.now() + 1
            }
        }
        return (peakRSS, longestTurn)
    }

    /// Prints the deliveries, the POSTs, the CPU and memory, the slow deliveries' bursts, and the RESULT line.
    private func report(_ load: Load, watch: Watchers) {
        let sent = load.sent, (cpuStart, cpuEnd) = (load.cpuStart, load.cpuEnd)
        let elapsed = load.schedule.loadEnd + 1 - load.schedule.t0
        let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
        let serverCores = Double(cpuEnd.server - cpuStart.server) / hz / elapsed
        let clientCores = Double(cpuEnd.client - cpuStart.client) / hz / elapsed
        let busy =
            Double(cpuEnd.machine.busy - cpuStart.machine.busy)
            / Double(max(1, cpuEnd.machine.total - cpuStart.machine.total))
        let fan = Percentiles(watch.latencies), post = Percentiles(sent.latencies)
        let missed = max(0, sent.expected - watch.latencies.count)
        let clientRSS = SoakBench.rssKiB(getpid())
        let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        // Whatever else ran meanwhile (other builds on a shared machine), in cores.
        let others = max(0, busy * Double(cores) - serverCores - clientCores)
        print(
            String(
                format:
                    "fix -> watcher (driverMoved): %d deliveries  p50 %.1f ms  p99 %.1f ms  max %.1f ms  (expected "
                    + "%d, missed %d)",
                watch.latencies.count, fan(50), fan(99), fan(100), sent.expected, missed))
        print(
            String(
                format: "fix POST: %d batches (%.0f/s)  p50 %.1f ms  p99 %.1f ms  errors %d  late >1 s %d",
                sent.latencies.count, Double(sent.latencies.count) / max(1, seconds - 1), post(50) * 1e3,
                post(99) * 1e3, sent.errors, sent.late))
        print(
            String(
                format:
                    "server: RSS peak %.1f MiB, CPU %.2f cores; client (same machine): CPU %.2f cores, RSS %.1f MiB; "
                    + "machine busy %.0f%% of %d cores (others %.2f cores)",
                Double(load.peakRSS) / 1024, serverCores, clientCores, Double(clientRSS) / 1024, busy * 100, cores,
                others))
        printBursts(watch.slow, load: load)
        // One line for bench/city.sh; last, the server's CPU seconds over the load and the fix POSTs made, for the
        // cost per POST and per delivery.
        print(
            String(
                format: "RESULT %d %d %d %.2f %.2f %.2f %d %d %.2f %d %d %.1f %.2f %.2f %.3f %d %.2f %.3f %d",
                providers, trips, watchers, fan(50), fan(99), fan(100), watch.latencies.count, missed,
                post(99) * 1e3, sent.errors, sent.late, Double(load.peakRSS) / 1024, serverCores, clientCores, busy,
                watch.closed, others, Double(cpuEnd.server - cpuStart.server) / hz, sent.latencies.count))
    }

    /// Slow deliveries in bursts (a server pause shows as one burst), and the reader's longest turn (a client
    /// pause).
    private func printBursts(_ slow: [(Double, Double, Int)], load: Load) {
        var bursts: [(at: Double, count: Int, worst: Double)] = []
        for (at, ms, _) in slow.sorted(by: { $0.0 < $1.0 }) {
            if let last = bursts.last, at - last.at < 200 {
                bursts[bursts.count - 1].count += 1; bursts[bursts.count - 1].worst = max(last.worst, ms)
            } else {
                bursts.append((at, 1, ms))
            }
        }
        let start = load.schedule.t0 + load.schedule.wallOffset
        print(
            String(format: "deliveries over 50 ms: %d in %d bursts", slow.count, bursts.count)
                + bursts.prefix(8).map {
                    String(format: " +%.1f s (%d, worst %.0f ms)", $0.at / 1000 - start, $0.count, $0.worst)
                }.joined(separator: ",")
                + String(format: "; the reader's longest turn %.0f ms", load.longestTurn.0 * 1000))
    }

    /// The first error any thread met (later ones are dropped).
    final class FirstError: Sendable {
        private let value = Mutex<String?>(nil)

        var message: String? { value.withLock { $0 } }

        func record(_ message: String) { value.withLock { if $0 == nil { $0 = message } } }
    }

    struct SendStats {
        var latencies: [Double] = []
        var errors = 0, late = 0, expected = 0
        mutating func merge(_ o: SendStats) {
            latencies += o.latencies; errors += o.errors; late += o.late; expected += o.expected
        }
    }

    /// `n` threads running `body(index)`, joined.
    private func parallel(_ n: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for w in 0..<n {
            group.enter()
            Thread.detachNewThread {
                body(w); group.leave()
            }
        }
        group.wait()
    }

    static func json(_ lat: Double, _ lng: Double) -> String { #"{"lat":\#(lat),"lng":\#(lng)}"# }

    /// Seconds since 1970 on CLOCK_REALTIME.
    static func wallNow() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// utime + stime of `pid`, in clock ticks.
    static func cpuTicks(_ pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After "pid (comm)": state is field 3, utime 14, stime 15.
        guard fields.count > 13 else { return 0 }
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }

    /// All cores' busy and total ticks from /proc/stat.
    static func machineTicks() -> (busy: Int, total: Int) {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first
        else { return (0, 1) }
        let v = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard v.count >= 5 else { return (0, 1) }
        let total = v.reduce(0, +), idle = v[3] + v[4]
        return (total - idle, total)
    }
}
