import Foundation
import Testing
import EnRouteDomain
import EnRouteModels
import EnRouteSQLite
import EnRoutePostgres

/// Every offer store keeps the same rules: one open offer per trip and per provider, one accept wins, an offer past its
/// time cannot be accepted and is ended by the next open, and endings are remembered.
@Suite(.timeLimit(.minutes(1))) struct OfferStoreTests {
    enum Kind: String, CaseIterable, Sendable {
        case memory, sqlite, postgres
        /// Memory and SQLite, and PostgreSQL when ENROUTE_TEST_POSTGRES_URL names a server.
        static var configured: [Kind] { [.memory, .sqlite] + (PostgresTestServer.url == nil ? [] : [.postgres]) }
    }

    /// The offer store of `kind` and the trip store it reads, holding the searching rides T1 and T2 (distinct
    /// customers). The in-memory offer store asks the in-memory trip store, as the backend wires it.
    static func makeSUT(
        _ kind: Kind, databaseClock: Bool = false
    ) async throws
        -> (any OfferStore, any TripStore, @Sendable () -> Void)
    {
        let now: @Sendable () -> Date = { Rows.t0 }
        let (offers, trips, cleanup): (any OfferStore, any TripStore, @Sendable () -> Void)
        switch kind {
        case .memory:
            let store = InMemoryTripStore()
            (offers, trips, cleanup) = (
                InMemoryOfferStore(tripWaiting: { (try? store.trip(id: $0))?.waitsForProvider ?? false }), store, {}
            )
        case .sqlite:
            let database = try TemporaryDatabase("offers")
            let store = try SQLiteTripStore(path: database.path)
            (offers, trips, cleanup) = (try SQLiteOfferStore(tripStore: store, now: now), store, { database.remove() })
        case .postgres:
            let url = PostgresTestServer.url ?? "", schema = PostgresTestServer.freshSchema("offers")
            let store = try PostgresTripStore(url: url, schema: schema)
            let book = try PostgresOfferStore(tripStore: store, databaseClock: databaseClock, now: now)
            (offers, trips, cleanup) = (book, store, { PostgresTestServer.drop(schema, url: url) })
        }
        try await trips.transaction { tx in
            try await tx.insert(Rows.ride("T1", customer: "c1"))
            try await tx.insert(Rows.ride("T2", customer: "c2"))
        }
        return (offers, trips, cleanup)
    }

    static func offer(
        _ id: String, trip: String = "T1", expiresIn seconds: TimeInterval = 15, from start: Date = Rows.t0
    ) -> Offer {
        Offer(
            offerId: id, tripId: trip, pickup: Rows.pickup, dropoff: Rows.dropoff,
            expiresAt: start.addingTimeInterval(seconds))
    }

    @Test(arguments: Kind.configured)
    func aTripAndAProviderEachHaveAtMostOneOpenOffer(_ kind: Kind) async throws {
        let (store, _, cleanup) = try await Self.makeSUT(kind)
        defer { cleanup() }
        #expect(try await store.open(Self.offer("O1"), to: "p1", now: Rows.t0))
        #expect(try await store.open(Self.offer("O2"), to: "p2", now: Rows.t0) == false, "the trip already has one")
        #expect(
            try await store.open(Self.offer("O3", trip: "T2"), to: "p1", now: Rows.t0) == false,
            "the provider already holds one")
        #expect(try await store.open(Self.offer("O4", trip: "T2"), to: "p2", now: Rows.t0))
        #expect(store.holders() == ["p1", "p2"])
        #expect(store.liveOffer(heldBy: "p1")?.offer.offerId == "O1")
        #expect(store.liveOffer(forTrip: "T2")?.providerId == "p2")
        // Declined, the trip is free for the next candidate.
        #expect(try await store.close("O1", .declined, unlessAccepting: true)?.offer.offerId == "O1")
        #expect(try await store.close("O1", .expired, unlessAccepting: true) == nil, "an offer ends once")
        #expect(try store.offer(id: "O1")?.ending == .declined)
        #expect(try await store.open(Self.offer("O5"), to: "p3", now: Rows.t0))
    }

    @Test(arguments: Kind.configured)
    func ofManyConcurrentAcceptsOneClaimsTheOfferAndTheRestFindItBusyOrAccepted(_ kind: Kind) async throws {
        let (store, _, cleanup) = try await Self.makeSUT(kind)
        defer { cleanup() }
        _ = try await store.open(Self.offer("O1"), to: "p1", now: Rows.t0)
        let claims = try await withThrowingTaskGroup(of: OfferClaim.self) { group in
            for _ in 0..<50 { group.addTask { try await store.claim("O1", by: "p1", now: Rows.t0) } }
            return try await group.reduce(into: [OfferClaim]()) { $0.append($1) }
        }
        #expect(claims.filter { if case .claimed = $0 { true } else { false } }.count == 1)
        #expect(
            claims.allSatisfy { if case .claimed = $0 { true } else if case .busy("T1") = $0 { true } else { false } })
        // A claimed offer is not withdrawn or expired underneath its accept.
        #expect(try await store.close("O1", .expired, unlessAccepting: true) == nil)
        #expect(try await store.close("O1", .accepted, unlessAccepting: false)?.accepting == true)
        #expect(
            try await store.claim("O1", by: "p1", now: Rows.t0)
                == .ended(OfferRecord(offer: Self.offer("O1"), providerId: "p1", ending: .accepted), justExpired: false)
        )
        #expect(
            try await store.claim("O1", by: "p2", now: Rows.t0) == .notFound, "another provider's claim finds nothing")
        #expect(store.holders().isEmpty)
    }

    @Test(arguments: Kind.configured)
    func anOfferPastItsTimeEndsAsExpiredInsteadOfBeingClaimed(_ kind: Kind) async throws {
        let (store, _, cleanup) = try await Self.makeSUT(kind)
        defer { cleanup() }
        _ = try await store.open(Self.offer("O1", expiresIn: 15), to: "p1", now: Rows.t0)
        let late = Rows.t0.addingTimeInterval(16)
        #expect(
            try await store.claim("O1", by: "p1", now: late)
                == .ended(OfferRecord(offer: Self.offer("O1"), providerId: "p1", ending: .expired), justExpired: true))
        #expect(
            try await store.claim("O1", by: "p1", now: late)
                == .ended(OfferRecord(offer: Self.offer("O1"), providerId: "p1", ending: .expired), justExpired: false))
    }

    @Test(arguments: Kind.configured)
    func anOfferWhoseSearchDiedIsEndedByTheNextOpenOnceItsTimeIsPast(_ kind: Kind) async throws {
        let (store, _, cleanup) = try await Self.makeSUT(kind)
        defer { cleanup() }
        _ = try await store.open(Self.offer("O1", expiresIn: 15), to: "p1", now: Rows.t0)
        #expect(
            try await store.open(Self.offer("O2", trip: "T2"), to: "p1", now: Rows.t0.addingTimeInterval(10)) == false)
        #expect(
            try await store.open(
                Self.offer("O3", trip: "T2", from: Rows.t0.addingTimeInterval(20)), to: "p1",
                now: Rows.t0.addingTimeInterval(20)))
        #expect(try store.offer(id: "O1")?.ending == .expired)
    }

    @Test(arguments: Kind.configured)
    func aTripHandedBackCanBeOfferedAndAcceptedAgain(_ kind: Kind) async throws {
        let (store, _, cleanup) = try await Self.makeSUT(kind)
        defer { cleanup() }
        _ = try await store.open(Self.offer("O1"), to: "p1", now: Rows.t0)
        _ = try await store.claim("O1", by: "p1", now: Rows.t0)
        _ = try await store.close("O1", .accepted, unlessAccepting: false)
        #expect(try await store.open(Self.offer("O2"), to: "p2", now: Rows.t0))
        guard case .claimed = try await store.claim("O2", by: "p2", now: Rows.t0) else {
            Issue.record("the second offer was not claimable"); return
        }
        #expect(try await store.close("O2", .accepted, unlessAccepting: false) != nil)
        #expect(try store.offer(id: "O1")?.ending == .accepted)
    }

    /// The offer is decided with the trip in hand: a trip an operator assigned, a delivery a courier took, a ride its
    /// customer cancelled, or a trip that is not there is offered to nobody, whatever a search on some node last saw.
    @Test(arguments: Kind.configured)
    func aTripThatNoLongerWaitsForAProviderIsOfferedToNobody(_ kind: Kind) async throws {
        let (store, trips, cleanup) = try await Self.makeSUT(kind)
        defer { cleanup() }
        var assigned = try #require(try trips.trip(id: "T1"))
        assigned.status = .ride(.driverAssigned)
        assigned.providerId = "p9"
        assigned.version += 1
        try await trips.transaction { [assigned] tx in try await tx.update(assigned, expectedVersion: 1) }
        #expect(try await store.open(Self.offer("O1"), to: "p1", now: Rows.t0) == false, "assigned by an operator")
        #expect(store.liveOffer(forTrip: "T1") == nil)
        #expect(store.holders().isEmpty)
        #expect(try await store.open(Self.offer("O2", trip: "T404"), to: "p1", now: Rows.t0) == false, "no such trip")
        try await trips.transaction { tx in
            try await tx.insert(Rows.order("D1", status: .picking, customer: "c3"))
            var taken = Rows.order("D2", status: .picking, customer: "c4")
            taken.providerId = "p8"
            try await tx.insert(taken)
        }
        #expect(
            try await store.open(Self.offer("O3", trip: "D1"), to: "p1", now: Rows.t0),
            "a delivery being picked, without a courier")
        #expect(
            try await store.open(Self.offer("O4", trip: "D2"), to: "p2", now: Rows.t0) == false,
            "a delivery a courier took")
        #expect(try await store.open(Self.offer("O5", trip: "T2"), to: "p2", now: Rows.t0), "a searching ride")
    }

    /// One node runs a trip's search: the lease is taken once, kept by its holder's heartbeat, and taken over only
    /// after
    /// it ran out; a holder stopped past its lease finds, when it resumes, that it lost it, and its heartbeat steals
    /// nothing.
    @Test(arguments: Kind.configured)
    func aSearchLeaseHasOneHolderAndPassesOnOnlyWhenItRunsOut(_ kind: Kind) async throws {
        let (store, _, cleanup) = try await Self.makeSUT(kind)
        defer { cleanup() }
        let t = { (s: TimeInterval) in Rows.t0.addingTimeInterval(s) }
        #expect(try await store.claimSearch("T1", node: "a", until: t(10), now: t(0)))
        #expect(try await store.claimSearch("T1", node: "b", until: t(15), now: t(5)) == false)
        #expect(try await store.claimSearch("T1", node: "a", until: t(16), now: t(6)), "the holder keeps it")
        try await store.renewSearches(node: "a", until: t(20))
        #expect(
            try await store.claimSearch("T1", node: "b", until: t(28), now: t(18)) == false,
            "renewed, it has not run out")
        // a stops renewing (stopped, or dead); once the lease ran out b takes it.
        #expect(try await store.claimSearch("T1", node: "b", until: t(31), now: t(21)))
        try await store.renewSearches(node: "a", until: t(40))  // a resumes: its heartbeat renews only what it holds
        #expect(
            try await store.claimSearch("T1", node: "a", until: t(32), now: t(22)) == false,
            "a learns it lost the search")
        try await store.releaseSearch("T1", node: "a")  // not a's to give up
        #expect(try await store.claimSearch("T1", node: "c", until: t(33), now: t(23)) == false)
        try await store.releaseSearch("T1", node: "b")
        #expect(try await store.claimSearch("T1", node: "c", until: t(34), now: t(24)))
    }

    /// A heartbeat reads which searches other nodes hold live instead of trying to claim each: its own leases and the
    /// ones that ran out are not among them.
    @Test(arguments: Kind.configured)
    func theSearchesHeldElsewhereAreTheOtherNodesLiveLeases(_ kind: Kind) async throws {
        let (store, _, cleanup) = try await Self.makeSUT(kind)
        defer { cleanup() }
        let t = { (s: TimeInterval) in Rows.t0.addingTimeInterval(s) }
        #expect(try await store.claimSearch("A1", node: "a", until: t(10), now: t(0)))
        #expect(try await store.claimSearch("B1", node: "b", until: t(10), now: t(0)))
        #expect(try await store.claimSearch("B2", node: "b", until: t(20), now: t(0)))
        #expect(try await store.searchesHeldElsewhere(than: "a", now: t(5)) == ["B1", "B2"])
        #expect(try await store.searchesHeldElsewhere(than: "b", now: t(5)) == ["A1"])
        #expect(
            try await store.searchesHeldElsewhere(than: "a", now: t(15)) == ["B2"],
            "B1's lease ran out: it is there to take")
        #expect(try await store.searchesHeldElsewhere(than: "c", now: t(25)).isEmpty)
    }

    /// On PostgreSQL the database's clock decides expiry when asked: an offer the node's clock calls live is expired
    /// by a database that is past it.
    @Test(.enabled(if: PostgresTestServer.url != nil, "needs ENROUTE_TEST_POSTGRES_URL"))
    func theDatabasesClockDecidesExpiryOnPostgres() async throws {
        let (store, _, cleanup) = try await Self.makeSUT(.postgres, databaseClock: true)
        defer { cleanup() }
        // Rows.t0 is in 2026; the database's clock is now, later: by it the offer ran out long ago.
        _ = try await store.open(Self.offer("O1", expiresIn: 15), to: "p1", now: Rows.t0)
        guard case .ended(let record, justExpired: true) = try await store.claim("O1", by: "p1", now: Rows.t0) else {
            Issue.record("the node's clock decided"); return
        }
        #expect(record.ending == .expired)
    }
}
