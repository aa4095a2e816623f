import Foundation
import EnRouteDomain

/// `server-bench assignment-dense --instances FILE`: dense instances from a file, each solved with
/// `Assignment.solve(dense:)` and timed, for bench/assignment.sh to compare with scipy's `linear_sum_assignment`.
///
/// The file holds instances back to back: rows and columns as little-endian Int32, then rows × columns little-endian
/// Float64 costs in row order (bench/assignment.py writes it). One line per instance,
/// `index seconds total column...` (a row's column, -1 when unassigned), then
/// `RESULT assignment-dense INSTANCES WALL_SECONDS CPU_SECONDS` over the solves alone.
struct AssignmentDenseBench {
    let path: String

    init(_ args: BenchArguments) {
        path = args.string("instances")
    }

    func run() throws {
        guard !path.isEmpty else {
            throw FanoutBench.Failure(description: "assignment-dense: --instances FILE is required")
        }
        let instances = try Self.read(Data(contentsOf: URL(fileURLWithPath: path)))
        var wall = 0.0, cpu = 0.0
        var lines: [String] = []
        for (index, costs) in instances.enumerated() {
            let cpu0 = ProcessCPU.selfSeconds()
            let t0 = Percentiles.now()
            let assigned = Assignment.solve(dense: costs)
            let seconds = Percentiles.now() - t0
            cpu += ProcessCPU.selfSeconds() - cpu0
            wall += seconds
            var total = 0.0
            for (row, column) in assigned.enumerated() { if let column { total += costs[row][column] } }
            let columns = assigned.map { String($0 ?? -1) }.joined(separator: " ")
            lines.append("\(index) \(seconds) \(total) \(columns)")
        }
        print(lines.joined(separator: "\n"))
        print("RESULT assignment-dense \(instances.count) \(wall) \(cpu)")
    }

    /// The instances of the file's bytes; throws on a truncated file or a negative size.
    static func read(_ data: Data) throws -> [[[Double]]] {
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            var offset = 0
            var instances: [[[Double]]] = []
            func int32() throws -> Int {
                guard offset + 4 <= raw.count else { throw truncated(offset) }
                defer { offset += 4 }
                return Int(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)))
            }
            while offset < raw.count {
                let rows = try int32(), columns = try int32()
                guard rows >= 0, columns >= 0 else {
                    throw FanoutBench.Failure(
                        description: "assignment-dense: instance \(instances.count) is \(rows) × \(columns)")
                }
                guard offset + rows * columns * 8 <= raw.count else { throw truncated(offset) }
                instances.append(
                    (0..<rows).map { row in
                        (0..<columns).map { column in
                            let bits = raw.loadUnaligned(
                                fromByteOffset: offset + (row * columns + column) * 8, as: UInt64.self)
                            return Double(bitPattern: UInt64(littleEndian: bits))
                        }
                    })
                offset += rows * columns * 8
            }
            return instances
        }
    }

    private static func truncated(_ offset: Int) -> FanoutBench.Failure {
        FanoutBench.Failure(
            description: "assignment-dense: the instances file ends inside an instance (byte \(offset))")
    }
}
