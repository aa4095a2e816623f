import Foundation
import EnRouteModels
import EnRouteDomain
import EnRouteAPI

/// Candidate search among many online providers: the dispatcher's grid query and ranking, against a
/// brute-force scan of the same positions in the same run, with the process's CPU time (getrusage) per query of each.
struct CandidatesBench {
    let providers: Int
    let queries: Int
    let bruteQueries: Int
    let seconds: Double

    init(_ args: BenchArguments) {
        providers = args.int("providers", 100_000)
        queries = args.int("queries", 20_000)
        bruteQueries = args.int("brute-queries", 300)
        seconds = args.double("seconds", 30)
    }

    func run() async {
        let now = Date()
        let presence = ProviderPresence(now: { now })
        var rng = SplitMix64(seed: 2026)
        // Greater Helsinki, about 44 km by 44 km; one provider in ten is busy on a trip.
        func point() -> Coordinate {
            Coordinate(
                lat: 60.0 + Double.random(in: 0..<0.4, using: &rng), lng: 24.6 + Double.random(in: 0..<0.8, using: &rng)
            )
        }
        var positions: [(id: String, coordinate: Coordinate)] = []
        for i in 0..<providers {
            let id = "p\(i)"
            let c = point()
            positions.append((id, c))
            presence.setOnline(id, true, position: c)
        }
        let busy = Set((0..<providers).filter { $0 % 10 == 3 }.map { "p\($0)" })
        let pickups = (0..<queries).map { _ in point() }
        let ranking = StraightLineRanking()
        let shortlist = DispatchPolicy().shortlist, radius = DispatchPolicy().searchRadius
        print(
            "candidate search: \(presence.findableCount) online providers, \(busy.count) busy, shortlist \(shortlist), "
                + "radius \(Int(radius)) m"
        )

        let deadline = Percentiles.now() + seconds
        var gridTimes: [Double] = []
        var gridTop: [[String]] = []
        let gridCPU = ProcessCPU.selfSeconds()
        for pickup in pickups where Percentiles.now() < deadline {
            let t0 = Percentiles.now()
            let hits = presence.nearest(to: pickup, limit: shortlist, within: radius) { !busy.contains($0) }
            let ranked = await ranking.rank(
                hits.map { DispatchCandidate(providerId: $0.id, position: $0.coordinate, distance: $0.distance) },
                pickup: pickup)
            gridTimes.append(Percentiles.now() - t0)
            if gridTop.count < bruteQueries { gridTop.append(ranked.map(\.providerId)) }
        }

        let bruteCPU = ProcessCPU.selfSeconds()
        var bruteTimes: [Double] = []
        var mismatches = 0
        for (q, pickup) in pickups.prefix(min(bruteQueries, gridTop.count)).enumerated()
        where Percentiles.now() < deadline + seconds {
            let t0 = Percentiles.now()
            let cosLat = cos(pickup.lat * .pi / 180)
            var best: [(String, Double)] = []
            for (id, c) in positions where !busy.contains(id) {
                let dy = (c.lat - pickup.lat) * 111_195, dx = (c.lng - pickup.lng) * 111_195 * cosLat
                let d = (dx * dx + dy * dy).squareRoot()
                guard d <= radius, best.count < shortlist || d < best[best.count - 1].1 else { continue }
                best.insert((id, d), at: best.firstIndex { $0.1 > d } ?? best.count)
                if best.count > shortlist { best.removeLast() }
            }
            bruteTimes.append(Percentiles.now() - t0)
            if best.map(\.0) != gridTop[q] { mismatches += 1 }
        }
        let cpu = (grid: bruteCPU - gridCPU, brute: ProcessCPU.selfSeconds() - bruteCPU)
        let grid = Percentiles(gridTimes), brute = Percentiles(bruteTimes)
        print(
            String(
                format: "grid + ranking: %d queries  p50 %.1f us  p99 %.1f us  max %.1f us", gridTimes.count,
                grid(50) * 1e6, grid(99) * 1e6,
                grid(100) * 1e6))
        print(
            String(
                format: "brute force:    %d queries  p50 %.1f us  p99 %.1f us", bruteTimes.count, brute(50) * 1e6,
                brute(99) * 1e6))
        print("same shortlist as brute force: \(bruteTimes.count - mismatches)/\(bruteTimes.count)")
        print(String(format: "ratio p99 / goal 200 us: %.3f  (<= 1 meets the goal)", grid(99) / 200e-6))
        print(String(format: "ratio brute-force p99 / grid p99: %.0fx", brute(99) / max(grid(99), 1e-9)))
        let perGrid = cpu.grid / Double(max(1, gridTimes.count)) * 1e6
        let perBrute = cpu.brute / Double(max(1, bruteTimes.count)) * 1e6
        print(
            String(
                format: "CPU per query (this process, user + system): grid + ranking %.1f us, brute force %.1f us: "
                    + "%.0fx", perGrid, perBrute, perBrute / max(perGrid, 1e-9)))
        print(String(format: "RESULT candidates-cost %.3f %.3f", perGrid, perBrute))
    }
}
