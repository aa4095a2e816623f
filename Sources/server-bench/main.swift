// The dispatch and live-location benchmarks' harness: `server-bench
// ingest|candidates|fanout|fanout-floor|soak|city|creates|raw-creates|ops|assignment|assignment-dense
// [--name value ...]`. Each prints its figures and a ratio against the goal from one run (bench/ingest.sh,
// bench/candidates.sh, bench/fanout.sh, bench/city.sh, bench/cluster.sh, bench/create.sh, bench/assignment.sh). An
// option no bench reads, or a malformed value, stops it (exit 64).
import Foundation
import Synchronization

let arguments = BenchArguments(Array(CommandLine.arguments.dropFirst()))

/// The bench's options read (its `init`), checked, then its run.
func checked<Bench>(_ arguments: BenchArguments, _ make: (BenchArguments) -> Bench) -> Bench {
    let bench = make(arguments)
    do { try arguments.check() } catch {
        FileHandle.standardError.write(Data("server-bench \(error)\n".utf8))
        exit(64)
    }
    return bench
}

/// Runs `body` on the concurrency pool while this thread waits. The entry point stays synchronous: an async one parks
/// the main thread in libdispatch's `sigsuspend`, whose read-only signal mask valgrind writes to and crashes on, and
/// bench/callgrind.sh runs this harness under valgrind.
func blocking(_ body: @escaping @Sendable () async throws -> Void) throws {
    let outcome = Mutex<Result<Void, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let result: Result<Void, any Error>
        do { try await body(); result = .success(()) } catch { result = .failure(error) }
        outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    try outcome.withLock { $0 }?.get()
}

do {
    switch arguments.command {
    case "ingest":
        let bench = checked(arguments, IngestBench.init)
        try blocking { try await bench.run() }
    case "candidates":
        let bench = checked(arguments, CandidatesBench.init)
        try blocking { await bench.run() }
    case "fanout": try checked(arguments, FanoutBench.init).run()
    case "fanout-floor": try checked(arguments, FanoutFloor.init).run()
    case "soak": try checked(arguments, SoakBench.init).run()
    case "city": try checked(arguments, CityBench.init).run()
    case "creates": try checked(arguments, CreatesBench.init).run()
    case "raw-creates": try checked(arguments, RawCreatesBench.init).run()
    case "ops":
        let bench = checked(arguments, OpsBench.init)
        try blocking { try await bench.run() }
    case "assignment": try checked(arguments, AssignmentBench.init).run()
    case "assignment-dense": try checked(arguments, AssignmentDenseBench.init).run()
    default:
        FileHandle.standardError.write(
            Data(
                ("usage: server-bench ingest|candidates|fanout|fanout-floor|soak|city|creates|raw-creates|ops|"
                    + "assignment|assignment-dense [--name value ...]\n").utf8))
        exit(64)
    }
} catch {
    FileHandle.standardError.write(Data("server-bench: \(error)\n".utf8))
    exit(1)
}
