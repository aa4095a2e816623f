import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import TestSupport

/// Trips booked ahead on a cluster: beginning a booked trip's search is one change, whichever nodes try.
extension MultiNodeTests {
    @Test func twoNodesBeginningOneBookedRideHoldTheCardOnceAndRecordItOnce() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        let trip = try await nodes.a.bookRide("c1", in: 20 * 60)
        try await eventually("b knows the booking") { try nodes.b.service.cached(trip.id) != nil }
        let starts = try await withThrowingTaskGroup(of: TripLifecycle.MatchingStart.self) { group in
            for node in nodes.all { group.addTask { try await node.service.lifecycle.startMatching(trip.id) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(starts.count == 2)
        #expect(starts.allSatisfy { if case .started = $0 { true } else { false } })
        let stored = try #require(try nodes.a.backend.store.trip(id: trip.id))
        #expect(stored.matchingStartedAt == nodes.clock.date)
        #expect(stored.payment?.state == .held)
        #expect(try nodes.a.backend.store.changes(tripId: trip.id).filter { $0.actorId == "dispatch" }.count == 1)
        let holds = try nodes.a.backend.store.ledger(tripId: trip.id).filter { $0.kind == "hold" }
        #expect(Set(holds.map(\.movementId)).count == 1)
    }

    @Test func aBookingWaitingOnANodeThatStopsIsBegunByAnotherOnce() async throws {
        let nodes = try await makeNodes()
        defer { nodes.remove() }
        let trip = try await nodes.a.bookRide("c1", in: 20 * 60)  // a commits it, so a runs its wait
        try await eventually("a runs the booking's wait") { nodes.a.backend.providers.dispatcher.activeSearches == 1 }
        await nodes.a.backend.stop()
        let b = nodes.b.backend.providers.dispatcher
        try await eventually(
            "b took the wait over", advancing: nodes.clock, by: .seconds(1), steps: 30, yieldsPerStep: 200_000
        ) { b.activeSearches == 1 }
        var p1 = ProviderInbox(nodes.b.backend.providers, "p1")
        // Nobody was near when b measured: the search begins 13 minutes before the booked time.
        try await eventually(
            "b's search began", advancing: nodes.clock, by: .seconds(30), steps: 40, yieldsPerStep: 20_000
        ) { try nodes.b.service.cached(trip.id)?.matchingStartedAt != nil }
        try await online("p1", on: nodes.b, north: 100, nodes)
        #expect(try await p1.offer().tripId == trip.id)
        #expect(try nodes.b.backend.store.changes(tripId: trip.id).filter { $0.actorId == "dispatch" }.count == 1)
        let holds = try nodes.b.backend.store.ledger(tripId: trip.id).filter { $0.kind == "hold" }
        #expect(Set(holds.map(\.movementId)).count == 1)
    }
}
