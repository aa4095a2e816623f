import Foundation
import EnRouteModels
import Synchronization
import EnRouteLogging

/// Batched matching: the searches of a city that look within one window are answered together, by the assignment of
/// least total pickup time over each request's shortlist. Every answer is still offered as an exclusive, timed offer;
/// a decline or an expiry sends the search to the next window.
extension Dispatcher {
    /// A search waiting for its window to close.
    struct WaitingLook {
        let id: UInt64
        let trip: TripRecord
        let excluded: Set<String>
        let reply: CheckedContinuation<Look, Never>
    }

    /// The candidate for one look of a search: at once when matching is greedy, at the close of the city's window when
    /// it is batched.
    func look(for trip: TripRecord, excluding excluded: Set<String>) async -> Look {
        guard policy.matching == .batched else { return await bestCandidate(for: trip, excluding: excluded) }
        let city = trip.city ?? Cities.defaultName
        let id = timers.wrappingAdd(1, ordering: .relaxed).newValue
        // The window's deadline is taken before the look joins it: none waits longer than one window.
        let clock = self.clock
        let deadline = Self.deadline(clock, after: policy.batchWindow)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { reply in
                let (opens, satisfied) = state.withLock { s in
                    let opens = s.windows[city] == nil
                    s.windows[city, default: []].append(
                        WaitingLook(id: id, trip: trip, excluded: excluded, reply: reply))
                    let waiting = s.windows.values.reduce(0) { $0 + $1.count }
                    let satisfied = s.windowWatchers.filter { $0.count <= waiting }.map(\.resume)
                    s.windowWatchers.removeAll { $0.count <= waiting }
                    return (opens, satisfied)
                }
                for watcher in satisfied { watcher.resume() }
                if opens {
                    Task { [self] in
                        await deadline()
                        await closeWindow(city)
                    }
                }
            }
        } onCancel: {
            // A stopped search stops waiting; its window goes on without it.
            let waiting = state.withLock { s -> WaitingLook? in
                guard let i = s.windows[city]?.firstIndex(where: { $0.id == id }) else { return nil }
                return s.windows[city]?.remove(at: i)
            }
            waiting?.reply.resume(returning: .nobody)
        }
    }

    /// How many searches wait for their window to close.
    public var looksWaiting: Int { state.withLock { $0.windows.values.reduce(0) { $0 + $1.count } } }

    /// Returns once at least `count` searches wait for a window to close.
    public func looksWaiting(atLeast count: Int) async {
        await withCheckedContinuation { resume in
            let now = state.withLock { s -> Bool in
                guard s.windows.values.reduce(0, { $0 + $1.count }) < count else { return true }
                s.windowWatchers.append((count, resume))
                return false
            }
            if now { resume.resume() }
        }
    }

    /// A wait that ends `duration` after now, whenever it is begun.
    static func deadline<C: Clock<Duration>>(_ clock: C, after duration: Duration) -> @Sendable () async -> Void {
        let deadline = clock.now.advanced(by: duration)
        return { try? await clock.sleep(until: deadline, tolerance: nil) }
    }

    /// Answers every search that joined the city's window.
    func closeWindow(_ city: String) async {
        let batch = state.withLock { $0.windows.removeValue(forKey: city) ?? [] }
        guard !batch.isEmpty else { return }
        metrics.increment(
            "enroute_dispatch_batches_total", help: "Batched-matching windows closed with a search in them.")
        metrics.increment(
            "enroute_dispatch_batched_looks_total", by: Double(batch.count),
            help: "Searches answered at the close of a batched-matching window.")
        // One request: exactly the greedy answer.
        if batch.count == 1 {
            return batch[0].reply.resume(
                returning: await bestCandidate(for: batch[0].trip, excluding: batch[0].excluded))
        }
        let looks = await match(batch.map { ($0.trip, $0.excluded) })
        for (waiting, look) in zip(batch, looks) { waiting.reply.resume(returning: look) }
    }

    /// Each request's shortlist and pickup seconds, then the assignment of least total seconds: one look per request.
    func match(_ requests: [(trip: TripRecord, excluded: Set<String>)]) async -> [Look] {
        let shortlists = await withTaskGroup(of: (Int, Shortlist).self) { group in
            for (i, request) in requests.enumerated() {
                group.addTask { [self] in (i, await shortlist(for: request.trip, excluding: request.excluded)) }
            }
            var lists = [Shortlist](repeating: .unreadable, count: requests.count)
            for await (i, list) in group { lists[i] = list }
            return lists
        }
        var columns: [String: Int] = [:]
        let rows = shortlists.map { list -> [AssignmentCandidate] in
            guard case .found(let candidates, let seconds) = list else { return [] }
            return zip(candidates, seconds).map { candidate, cost in
                let column = columns[candidate.providerId] ?? columns.count
                columns[candidate.providerId] = column
                return AssignmentCandidate(column: column, cost: cost)
            }
        }
        let assigned = Assignment.solve(columns: columns.count, candidates: rows)
        return zip(shortlists, zip(rows, assigned)).map { list, pair in
            guard case .found(let candidates, _) = list else { return list == .unreadable ? .unreadable : .nobody }
            guard let column = pair.1, let at = pair.0.firstIndex(where: { $0.column == column }) else {
                return .nobody
            }
            return .found(candidates[at])
        }
    }

    enum Shortlist: Equatable {
        case found([DispatchCandidate], seconds: [Double])
        case nobody
        case unreadable
    }

    /// The nearest idle providers this request may be offered to, with their pickup seconds.
    func shortlist(for trip: TripRecord, excluding excluded: Set<String>) async -> Shortlist {
        guard let candidates = await nearby(trip, excluding: excluded) else { return .unreadable }
        guard !candidates.isEmpty else { return .nobody }
        return .found(candidates, seconds: await ranking.pickupSeconds(candidates, pickup: trip.pickup))
    }
}
