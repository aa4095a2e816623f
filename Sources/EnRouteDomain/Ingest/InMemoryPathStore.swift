import Foundation
import Synchronization

/// A `PathStore` in memory, for tests and the in-process backend.
public final class InMemoryPathStore: PathStore {
    private struct Path { var points: [PathPoint] = []; var times: Set<Date> = [] }
    private let paths = Mutex<[String: Path]>([:])

    public init() {}

    public func append(_ points: [PathPoint]) async throws {
        paths.withLock { all in
            for point in points where all[point.tripId, default: Path()].times.insert(point.recordedAt).inserted {
                all[point.tripId]!.points.append(point)
            }
        }
    }

    public func path(tripId: String) async throws -> [PathPoint] {
        paths.withLock { ($0[tripId]?.points ?? []).sorted { $0.recordedAt < $1.recordedAt } }
    }
}
