import Foundation
import EnRouteLogging
import EnRouteBackend
import EnRouteNotifications
import EnRouteModels
import EnRouteDomain
import EnRouteAPI
import EnRouteSQLite
import HTTPEngine
import SQLiteClient
import PostgresClient

/// Location ingest with the path persisted (SQLite, group commit), in batches of 50, against raw SQLite
/// inserts of the same rows into the same table in the same run. With `--store postgres://…` the service runs on
/// that PostgreSQL database (which should be empty) and the reference is one `COPY` of the same rows (psql's
/// `\copy` from a CSV file) into a table like `trip_paths`, with its primary key.
///
/// Cost per fix: this process's CPU time (getrusage, user + system) over the upload phase per fix accepted, against
/// the same over each raw insert phase per row. The uploading tasks (the client) and the probes run in this process:
/// their CPU is in the service's figure. The per-batch reference runs `--rounds` times; a ratio over it is withheld
/// when its rounds spread more than `--max-spread` per cent.
struct IngestBench {
    let providers: Int
    let batches: Int
    let batchSize: Int
    let concurrency: Int
    let seconds: Double
    let directory: String
    let storeURL: String
    let rounds: Int
    let maxSpread: Double

    init(_ args: BenchArguments) {
        providers = args.int("providers", 200)
        batches = args.int("batches", 50)
        batchSize = args.int("batch", 50)
        concurrency = args.int("concurrency", 32)
        seconds = args.double("seconds", 60)
        directory = args.string("dir", NSTemporaryDirectory())
        storeURL = args.string("store")
        rounds = max(1, args.int("rounds", 3))
        maxSpread = args.double("max-spread", 10)
    }

    /// One raw insert phase: its rows per second and this process's CPU seconds over it.
    struct RawRun {
        var rate: Double
        var cpu: Double
        var rows: Int
        var microsPerRow: Double { cpu / Double(max(rows, 1)) * 1e6 }
    }

    func run() async throws {
        let base = URL(fileURLWithPath: directory).appendingPathComponent("ingest-bench-\(getpid())")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        let onPostgres = !storeURL.isEmpty
        let backend = try makeBackend(in: base, onPostgres: onPostgres)
        let tripIds = try await assignRides(on: backend)
        let work = makeBatches()
        let rows = pathRows(work, tripIds: tripIds)
        let total = providers * batches * batchSize
        print(
            "ingest bench: \(providers) providers x \(batches) batches x \(batchSize) fixes = \(total) fixes, "
                + "\(concurrency) concurrent uploaders"
                + (onPostgres ? ", on PostgreSQL" : ""))

        let rawRuns =
            onPostgres
            ? []
            : try (1...rounds).map { r in
                try rawInserts(
                    rows, path: base.appendingPathComponent("raw50-\(r).sqlite").path, rowsPerTransaction: batchSize)
            }
        let rawPerBatch = Self.median(rawRuns.map(\.rate))
        if !onPostgres {
            print(
                String(format: "raw SQLite, one transaction per %d rows:   %10.0f rows/s", batchSize, rawPerBatch)
                    + "  (median of \(rounds): "
                    + rawRuns.map { String(format: "%.0f", $0.rate) }.joined(separator: ", ") + ")")
        }

        let deadline = Percentiles.now() + seconds
        let cpu0 = ProcessCPU.selfSeconds()
        let t0 = Percentiles.now()
        let probes = try Probes(store: backend.store, trip: tripIds[0], directory: base, onPostgres: onPostgres)
        let accepted = try await upload(work, to: backend.providers, until: deadline)
        let elapsed = Percentiles.now() - t0
        let uploadCPU = ProcessCPU.selfSeconds() - cpu0
        let probed = await probes.stop()
        let stored =
            onPostgres
            ? try PostgresConnection(url: storeURL).query("SELECT COUNT(*) FROM trip_paths").first.map {
                Int($0.int(0))
            } ?? 0
            : try SQLiteDatabase(path: base.appendingPathComponent("service.sqlite").path).query(
                "SELECT COUNT(*) FROM trip_paths"
            ) { Int($0.int(0)) }.first ?? 0
        let rate = Double(accepted) / elapsed
        report(rate: rate, accepted: accepted, elapsed: elapsed, stored: stored, probed: probed, onPostgres: onPostgres)
        if onPostgres {
            let copy = try rawCopy(rows, csv: base.appendingPathComponent("rows.csv").path)
            print(
                String(format: "raw PostgreSQL COPY of the same rows (psql \\copy, one statement): %10.0f rows/s", copy)
            )
            print(String(format: "ratio ingest / COPY: %.2fx", rate / copy))
            let writes = Percentiles(probed.writes)
            print(
                String(
                    format: "RESULT ingest-postgres %.0f %.0f %.3f %.3f", rate, copy, writes(50) * 1e3, writes(99) * 1e3
                ))
            if stored != accepted { print("WARNING: \(accepted) accepted but \(stored) stored") }
            return
        }
        let rawBulk = try rawInserts(
            rows, path: base.appendingPathComponent("rawbulk.sqlite").path, rowsPerTransaction: 5_000)
        print(String(format: "raw SQLite, one transaction per 5000 rows: %10.0f rows/s", rawBulk.rate))
        let refusal = withheld(rawRuns.map(\.rate))
        print(
            refusal.map { "ratio ingest / raw (per \(batchSize)):   \($0)" }
                ?? String(
                    format: "ratio ingest / raw (per %d):   %.2fx  (goal >= 0.5x)", batchSize, rate / rawPerBatch))
        print(String(format: "ratio ingest / raw (per 5000): %.2fx  (1 round)", rate / rawBulk.rate))
        print(String(format: "ratio ingest / goal 200000 fixes/s: %.2fx", rate / 200_000))
        if stored != accepted { print("WARNING: \(accepted) accepted but \(stored) stored") }
        reportCost(
            service: RawRun(rate: rate, cpu: uploadCPU, rows: accepted), raw: rawRuns, bulk: rawBulk)
    }

    /// The cost per fix against the raw references, and the RESULT line carrying it.
    private func reportCost(service: RawRun, raw: [RawRun], bulk: RawRun) {
        let perRow = Self.median(raw.map(\.microsPerRow))
        print("cost per fix (this process's CPU time, user + system, getrusage):")
        print(
            String(
                format: "  service ingest:   %8.2f us CPU per fix (%.2f s over the upload phase; the %d uploading "
                    + "tasks (the client) and the probes run in this process and are included)",
                service.microsPerRow, service.cpu, concurrency))
        print(
            String(format: "  raw SQLite, one transaction per %d rows: %8.2f us CPU per row", batchSize, perRow)
                + "  (rounds: " + raw.map { String(format: "%.2f", $0.microsPerRow) }.joined(separator: ", ")
                + "; spread " + spreadText(raw.map(\.microsPerRow)) + ")")
        print(
            String(
                format: "  raw SQLite, one transaction per 5000 rows: %.2f us CPU per row (1 round)", bulk.microsPerRow)
        )
        let refusal = withheld(raw.map(\.microsPerRow))
        print(
            "  CPU per fix ratio ingest / raw (per \(batchSize)): "
                + (refusal ?? String(format: "%.2fx  (goal <= 1x)", service.microsPerRow / perRow)))
        let ratio = refusal == nil ? String(format: "%.4f", service.microsPerRow / perRow) : "-"
        // rate, raw per-batch rate, raw bulk rate, µs CPU per fix, per raw row, their ratio ('-' withheld), spread %.
        print(
            String(
                format: "RESULT ingest %.0f %.0f %.0f %.3f %.3f %@ %.1f", service.rate, Self.median(raw.map(\.rate)),
                bulk.rate, service.microsPerRow, perRow, ratio, (Self.spread(raw.map(\.microsPerRow)) ?? 0) * 100))
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// (max - min) / median of the rounds, or nil with fewer than two.
    static func spread(_ values: [Double]) -> Double? {
        guard values.count > 1, median(values) > 0 else { return nil }
        return (values.max()! - values.min()!) / median(values)
    }

    private func spreadText(_ values: [Double]) -> String {
        Self.spread(values).map { String(format: "%.0f %%", $0 * 100) } ?? "n/a (1 round)"
    }

    /// Why a ratio over the raw rounds is not printed, or nil when they spread no more than `--max-spread`.
    private func withheld(_ values: [Double]) -> String? {
        guard let spread = Self.spread(values), spread * 100 > maxSpread else { return nil }
        return String(format: "ratio withheld: raw SQLite's rounds spread %.0f %% (> %g %%)", spread * 100, maxSpread)
    }

    /// The production wiring (the composition root) over its own database: SQLite in `base`, or `--store`.
    private func makeBackend(in base: URL, onPostgres: Bool) throws -> Backend {
        var configuration = BackendConfiguration(
            storage: onPostgres
                ? .postgres(url: storeURL) : .sqlite(path: base.appendingPathComponent("service.sqlite").path),
            secret: "ingest-bench-secret-0123456789")
        configuration.proofDirectory = base.appendingPathComponent("blobs").path
        configuration.rateLimits = .off
        return try Backend(configuration, effects: .system(push: LogPushGateway(log: .discard), log: .discard))
    }

    /// One assigned ride per provider, requested as the app does: a saved card, then the economy quote the request
    /// names; the rides' ids.
    private func assignRides(on backend: Backend) async throws -> [String] {
        let service = backend.service
        var tripIds: [String] = []
        for i in 0..<providers {
            let customer = Account(id: "c\(i)", role: .customer)
            let pickup = Coordinate(lat: 60.17, lng: 24.94), dropoff = Coordinate(lat: 60.18, lng: 24.95)
            _ = try await backend.paymentMethods.add(token: "pm_card_visa", makeDefault: true, for: customer.id)
            guard
                let quote = try await backend.payments.quotes.rideQuotes(
                    pickup: pickup, dropoff: dropoff, for: customer
                )
                .first(where: { $0.productID == "economy" })
            else { throw IngestBenchFailure("no economy quote") }
            let ride = try await service.requestRide(
                TripRequest(pickup: pickup, dropoff: dropoff, productID: "economy", quoteId: quote.id), by: customer)
            _ = try await service.move(ride.id, .assignProvider("p\(i)"), by: Account(id: "p\(i)", role: .provider))
            tripIds.append(ride.id)
        }
        return tripIds
    }

    /// Every provider's batches: driving north at 11 m/s, a fix a second, ending before now.
    private func makeBatches() -> [[LocationBatch]] {
        let start = Date().addingTimeInterval(-Double(batches * batchSize) - 60)
        return (0..<providers).map { p in
            (0..<batches).map { b in
                LocationBatch(
                    batchId: "p\(p)-b\(b)",
                    fixes: (0..<batchSize).map { j in
                        let n = b * batchSize + j
                        return LocationFix(
                            lat: 60.0 + Double(p) * 0.001 + Double(n) * 0.0001, lng: 24.9, heading: 0, speed: 11,
                            accuracy: 5,
                            recordedAt: start.addingTimeInterval(Double(n)))
                    })
            }
        }
    }

    /// The path rows the batches become, batch by batch, for the raw references.
    private func pathRows(_ work: [[LocationBatch]], tripIds: [String]) -> [[PathPoint]] {
        work.enumerated().flatMap { p, list in
            list.map { batch in
                batch.fixes.map {
                    PathPoint(
                        tripId: tripIds[p], providerId: "p\(p)", lat: $0.lat, lng: $0.lng, heading: $0.heading,
                        speed: $0.speed,
                        accuracy: $0.accuracy, recordedAt: $0.recordedAt, receivedAt: Date())
                }
            }
        }
    }

    /// `--concurrency` uploaders, each for its share of the providers, batch b of each before b + 1, until the
    /// deadline; the fixes accepted.
    private func upload(
        _ work: [[LocationBatch]], to operations: ProviderOperations, until deadline: Double
    ) async throws -> Int {
        let batches = self.batches, providers = self.providers, concurrency = self.concurrency
        return try await withThrowingTaskGroup(of: Int.self) { group in
            for w in 0..<concurrency {
                group.addTask {
                    var kept = 0
                    for b in 0..<batches {
                        for p in stride(from: w, to: providers, by: concurrency) {
                            if Percentiles.now() > deadline { return kept }
                            kept += try await operations.ingest.ingest(work[p][b], provider: "p\(p)").accepted
                        }
                    }
                    return kept
                }
            }
            return try await group.reduce(0, +)
        }
    }

    /// Prints the ingest's rate and what the probes saw meanwhile.
    private func report(
        rate: Double, accepted: Int, elapsed: Double, stored: Int, probed: Probes.Samples, onPostgres: Bool
    ) {
        let writes = Percentiles(probed.writes), wakes = Percentiles(probed.wakes), syncs = Percentiles(probed.syncs)
        print(
            String(
                format:
                    "ingest (filters, presence, fan-out, path): %10.0f fixes/s  (%d accepted in %.2f s, %d path "
                    + "rows stored)",
                rate, accepted, elapsed, stored))
        print(
            String(
                format: "a trip write meanwhile: %d writes  p50 %.2f ms  p99 %.2f ms  max %.2f ms",
                writes.sorted.count, writes(50) * 1e3, writes(99) * 1e3, writes(100) * 1e3))
        print(
            String(
                format:
                    "the floor meanwhile, a task woken from a queue: p50 %.2f ms  p99 %.2f ms  max %.2f ms; trip write "
                    + "p99 / floor p99: %.2fx",
                wakes(50) * 1e3, wakes(99) * 1e3, wakes(100) * 1e3, writes(99) / wakes(99)))
        if !onPostgres {
            print(
                String(
                    format:
                        "a 4 KB write and fdatasync beside the database meanwhile: p50 %.2f ms  p99 %.2f ms  "
                        + "max %.2f ms",
                    syncs(50) * 1e3, syncs(99) * 1e3, syncs(100) * 1e3))
        }
    }

    /// The same rows, in the ingest's order, written to `csv` and loaded by one `\copy` into a fresh table like
    /// `trip_paths` (its primary key included); rows per second of the psql run (its start and connection included).
    private func rawCopy(_ batches: [[PathPoint]], csv: String) throws -> Double {
        let perProvider = batches.count / providers
        var text = ""
        text.reserveCapacity(batches.count * batchSize * 96)
        for b in 0..<perProvider {
            for p in 0..<providers {
                for point in batches[p * perProvider + b] {
                    text +=
                        "\(point.tripId),\(point.recordedAt.timeIntervalSince1970),\(point.providerId),\(point.lat),"
                        + "\(point.lng),"
                        + "\(point.heading),\(point.speed),\(point.accuracy),"
                        + "\(point.receivedAt.timeIntervalSince1970)\n"
                }
            }
        }
        try text.write(toFile: csv, atomically: false, encoding: .utf8)
        let db = try PostgresConnection(url: storeURL)
        try db.execute("DROP TABLE IF EXISTS raw_paths; CREATE TABLE raw_paths (LIKE trip_paths INCLUDING ALL)")
        db.close()
        let psql = Process()
        psql.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        psql.arguments = [
            "psql", storeURL, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", "\\copy raw_paths FROM '\(csv)' WITH (FORMAT csv)",
        ]
        let t0 = Percentiles.now()
        try psql.run()
        psql.waitUntilExit()
        let elapsed = Percentiles.now() - t0
        guard psql.terminationStatus == 0 else {
            throw IngestBenchFailure("psql \\copy exited \(psql.terminationStatus)")
        }
        let loaded =
            try PostgresConnection(url: storeURL).query("SELECT COUNT(*) FROM raw_paths").first.map { Int($0.int(0)) }
            ?? 0
        return Double(loaded) / elapsed
    }

    /// Inserts `rows` batch by batch into a fresh database with the service's schema; rows per second and this
    /// process's CPU over the inserts.
    private func rawInserts(_ batches: [[PathPoint]], path: String, rowsPerTransaction: Int) throws -> RawRun {
        _ = try SQLiteTripStore(path: path)
        let db = try SQLiteDatabase(path: path)
        let sql = """
            INSERT OR IGNORE INTO trip_paths (trip_id, recorded_at, provider_id, lat, lng, heading, speed, accuracy, \
            received_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            """
        // The same order as the ingest: batch b of every provider, then b + 1.
        let perProvider = batches.count / providers
        var ordered: [PathPoint] = []
        ordered.reserveCapacity(batches.count * batchSize)
        for b in 0..<perProvider { for p in 0..<providers { ordered += batches[p * perProvider + b] } }
        let deadline = Percentiles.now() + seconds
        let cpu0 = ProcessCPU.selfSeconds()
        let t0 = Percentiles.now()
        var written = 0
        for chunk in stride(from: 0, to: ordered.count, by: rowsPerTransaction) where Percentiles.now() < deadline {
            let slice = ordered[chunk..<min(ordered.count, chunk + rowsPerTransaction)]
            try db.transaction {
                for point in slice {
                    try db.run(
                        sql,
                        [
                            .text(point.tripId), .real(point.recordedAt.timeIntervalSince1970), .text(point.providerId),
                            .real(point.lat),
                            .real(point.lng), .real(point.heading), .real(point.speed), .real(point.accuracy),
                            .real(point.receivedAt.timeIntervalSince1970),
                        ])
                }
            }
            written += slice.count
        }
        let elapsed = Percentiles.now() - t0
        return RawRun(rate: Double(written) / elapsed, cpu: ProcessCPU.selfSeconds() - cpu0, rows: written)
    }
}

extension IngestBench {
    /// What runs beside the uploads. One trip written at a time, as state changes are: how long each transaction
    /// takes while paths are being stored into the same database. Between writes, the floor under this load: a task
    /// woken from a dispatch queue (as a writer's turn is handed on) and run again, with no database. And on SQLite
    /// a durable write's floor on this disk under this load: 4 KB written to a file beside the database and
    /// fdatasync'd (a trip write that lands behind the checkpoint's step on the writer waits for two of these).
    struct Probes {
        /// The probes' times, in seconds.
        struct Samples {
            var writes: [Double]
            var wakes: [Double]
            var syncs: [Double]
        }

        private let syncFile: Int32
        private let probe: Task<(writes: [Double], wakes: [Double]), Never>
        private let syncProbe: Task<[Double], Never>

        /// Starts the probes; on PostgreSQL the sync probe stays idle.
        init(store: any TripStore, trip probeTrip: String, directory base: URL, onPostgres: Bool) throws {
            let waker = DispatchQueue(label: "ingest-bench.waker")
            let syncFile = open(base.appendingPathComponent("sync-probe").path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
            guard syncFile >= 0 else { throw IngestBenchFailure("cannot open the sync probe's file in \(base.path)") }
            self.syncFile = syncFile
            let page = [UInt8](repeating: 7, count: 4_096)
            probe = Task { () -> (writes: [Double], wakes: [Double]) in
                var writes: [Double] = [], wakes: [Double] = []
                while !Task.isCancelled {
                    var start = Percentiles.now()
                    _ = try? await store.transaction { tx in
                        if let trip = try await tx.trip(probeTrip) {
                            try await tx.update(trip, expectedVersion: trip.version)
                        }
                    }
                    writes.append(Percentiles.now() - start)
                    try? await Task.sleep(for: .milliseconds(1))
                    start = Percentiles.now()
                    await withCheckedContinuation { woken in waker.async { woken.resume() } }
                    wakes.append(Percentiles.now() - start)
                    try? await Task.sleep(for: .milliseconds(1))
                }
                return (writes, wakes)
            }
            let syncing = DispatchQueue(label: "ingest-bench.sync")
            syncProbe = Task { () -> [Double] in
                var syncs: [Double] = []
                while !Task.isCancelled, !onPostgres {
                    syncs.append(
                        await withCheckedContinuation { done in
                            syncing.async {
                                let start = Percentiles.now()
                                _ = page.withUnsafeBytes { pwrite(syncFile, $0.baseAddress, $0.count, 0) }
                                _ = fdatasync(syncFile)
                                done.resume(returning: Percentiles.now() - start)
                            }
                        })
                    try? await Task.sleep(for: .milliseconds(2))
                }
                return syncs
            }
        }

        /// Stops the probes and closes the sync probe's file; what they measured.
        func stop() async -> Samples {
            probe.cancel()
            let probed = await probe.value
            syncProbe.cancel()
            let synced = await syncProbe.value
            close(syncFile)
            return Samples(writes: probed.writes, wakes: probed.wakes, syncs: synced)
        }
    }
}

/// A step before the measurement failed.
struct IngestBenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
