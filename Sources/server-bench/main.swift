// The dispatch and live-location benchmarks' harness: `server-bench ingest|candidates|fanout|fanout-floor|soak|city|creates [--name value ...]`.
// Each prints its figures and a ratio against the goal from one run (bench/ingest.sh, bench/candidates.sh, bench/fanout.sh, bench/city.sh,
// bench/cluster.sh).
import Foundation

let arguments = BenchArguments(Array(CommandLine.arguments.dropFirst()))
do {
    switch arguments.command {
    case "ingest": try await IngestBench(arguments).run()
    case "candidates": await CandidatesBench(arguments).run()
    case "fanout": try FanoutBench(arguments).run()
    case "fanout-floor": try FanoutFloor(arguments).run()
    case "soak": try SoakBench(arguments).run()
    case "city": try CityBench(arguments).run()
    case "creates": try CreatesBench(arguments).run()
    default:
        FileHandle.standardError.write(Data("usage: server-bench ingest|candidates|fanout|fanout-floor|soak|city|creates [--name value ...]\n".utf8))
        exit(64)
    }
} catch {
    FileHandle.standardError.write(Data("server-bench: \(error)\n".utf8))
    exit(1)
}
