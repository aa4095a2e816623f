import Foundation
import EnRouteDomain

/// `server-bench assignment`: the assignment solver on random sparse instances (2,000 requests × 5,000 providers with
/// 20 candidates each by default), a fresh instance per run from `--seed` plus the run's number. Prints each run's
/// solve time and CPU time, their p50, p99 and max, and p99 against the goal (100 ms) and the matching window (2 s).
/// `--write FILE` keeps the first `--write-runs` instances as text, with each one's assigned count and total printed
/// as `instance RUN ASSIGNED TOTAL`, for bench/assignment.py to solve with scipy.
struct AssignmentBench {
    let rows: Int
    let columns: Int
    let candidates: Int
    let runs: Int
    let seed: Int
    let layout: AssignmentInstance.Layout
    let write: String
    let writeRuns: Int
    let goal: Double
    let window: Double

    init(_ args: BenchArguments) {
        rows = args.int("rows", 2_000)
        columns = args.int("columns", 5_000)
        candidates = args.int("candidates", 20)
        runs = args.int("runs", 200)
        seed = args.int("seed", 1)
        layout = AssignmentInstance.Layout(rawValue: args.choice("layout", ["uniform", "city"])) ?? .uniform
        write = args.string("write")
        writeRuns = args.int("write-runs", 3)
        goal = args.double("goal-ms", 100) / 1_000
        window = args.double("window", 2)
    }

    func run() throws {
        guard rows >= 0, columns >= 0, candidates >= 0, runs > 0 else {
            throw FanoutBench.Failure(description: "assignment: sizes must not be negative and --runs must be positive")
        }
        print(
            "assignment: \(rows) requests × \(columns) providers, \(candidates) candidates each (layout "
                + "\(layout.rawValue)), \(runs) runs from seed \(seed)")
        var times: [Double] = [], cpus: [Double] = [], served: [Int] = []
        var written = ""
        for run in 0..<runs {
            var rng = SplitMix64(seed: UInt64(truncatingIfNeeded: seed &+ run))
            let instance = AssignmentInstance(
                rows: rows, columns: columns, candidates: candidates, layout: layout, using: &rng)
            let cpu0 = ProcessCPU.selfSeconds()
            let t0 = Percentiles.now()
            let assigned = Assignment.solve(columns: instance.columns, candidates: instance.candidates)
            times.append(Percentiles.now() - t0)
            cpus.append(ProcessCPU.selfSeconds() - cpu0)
            let count = assigned.count { $0 != nil }
            served.append(count)
            print(
                String(
                    format: "run %d: %.2f ms, CPU %.2f ms, %d assigned", run, times[run] * 1e3, cpus[run] * 1e3, count))
            if !write.isEmpty, run < writeRuns {
                written += instance.text
                print("instance \(run) \(count) \(Assignment.total(assigned, candidates: instance.candidates))")
            }
        }
        if !write.isEmpty { try written.write(toFile: write, atomically: true, encoding: .utf8) }
        summarize(times: times, cpus: cpus, served: served)
    }

    private func summarize(times: [Double], cpus: [Double], served: [Int]) {
        let wall = Percentiles(times), cpu = Percentiles(cpus)
        print(
            String(
                format: "solve: p50 %.2f ms  p99 %.2f ms  max %.2f ms;  CPU p50 %.2f ms  p99 %.2f ms;  assigned "
                    + "%d–%d of %d", wall(50) * 1e3, wall(99) * 1e3, wall(100) * 1e3, cpu(50) * 1e3, cpu(99) * 1e3,
                served.min() ?? 0, served.max() ?? 0, rows))
        print(
            String(
                format: "ratio p99 / goal %.0f ms: %.3f  (<= 1 meets the goal);  p99 / matching window %.1f s: %.4f",
                goal * 1e3, wall(99) / goal, window, wall(99) / window))
        print(
            String(
                format: "RESULT assignment %@ %d %d %d %d %.3f %.3f %.3f %.3f", layout.rawValue, rows, columns,
                candidates, times.count, wall(50) * 1e3, wall(99) * 1e3, wall(100) * 1e3, cpu(50) * 1e3))
    }
}
