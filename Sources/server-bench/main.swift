// The dispatch and live-location benchmarks' harness: `server-bench
// ingest|candidates|fanout|fanout-floor|soak|city|creates|raw-creates
// [--name value ...]`. Each prints its figures and a ratio against the goal from one run (bench/ingest.sh,
// bench/candidates.sh,
// bench/fanout.sh, bench/city.sh, bench/cluster.sh, bench/create.sh). An option no bench reads, or a malformed value,
// stops it (exit 64).
import Foundation

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

do {
    switch arguments.command {
    case "ingest": try await checked(arguments, IngestBench.init).run()
    case "candidates": await checked(arguments, CandidatesBench.init).run()
    case "fanout": try checked(arguments, FanoutBench.init).run()
    case "fanout-floor": try checked(arguments, FanoutFloor.init).run()
    case "soak": try checked(arguments, SoakBench.init).run()
    case "city": try checked(arguments, CityBench.init).run()
    case "creates": try checked(arguments, CreatesBench.init).run()
    case "raw-creates": try checked(arguments, RawCreatesBench.init).run()
    default:
        FileHandle.standardError.write(
            Data(
                ("usage: server-bench ingest|candidates|fanout|fanout-floor|soak|city|creates|raw-creates [--name "
                    + "value ...]\n").utf8))
        exit(64)
    }
} catch {
    FileHandle.standardError.write(Data("server-bench: \(error)\n".utf8))
    exit(1)
}
