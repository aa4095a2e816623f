import Foundation
import Synchronization
import Testing
import EnRouteDomain
import EnRouteModels
import EnRouteRedis
import RedisClient

/// The `ProviderLocations` rules, run against every implementation: `ProviderPresence` always, `RedisProviderLocations`
/// when `ENROUTE_TEST_REDIS_URL` names a server (make test starts one).
@Suite struct ProviderLocationsContractTests {
    enum Implementation: String, CaseIterable, CustomTestStringConvertible {
        case memory, redis
        var testDescription: String { rawValue }

        static var available: [Implementation] { TestRedisServer.url == nil ? [.memory] : allCases }
    }

    /// Wall time the test moves by hand.
    final class TestTime: Sendable {
        private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        var now: Date { current.withLock { $0 } }
        func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
    }

    private func makeSUT(
        _ implementation: Implementation, cities: Cities = .everywhere, fixLifetime: TimeInterval = 120
    ) throws
        -> (any ProviderLocations, TestTime)
    {
        let time = TestTime()
        switch implementation {
        case .memory:
            return (ProviderPresence(fixLifetime: fixLifetime, cities: cities, now: { time.now }), time)
        case .redis:
            let redis = RedisConnection(try RedisConfiguration(url: TestRedisServer.url ?? ""))
            let prefix = "enroute-test-\(UInt64.random(in: 0...UInt64.max))"
            return (
                RedisProviderLocations(
                    redis: redis, cities: cities, prefix: prefix, fixLifetime: fixLifetime, bucketSpan: 30,
                    now: { time.now }), time
            )
        }
    }

    /// Two cities side by side: Helsinki east of longitude 24.8, Espoo west of it.
    static let twoCities = Cities([
        City(
            name: "helsinki",
            polygons: [
                .init(outer: [
                    Coordinate(lat: 60.10, lng: 24.80), Coordinate(lat: 60.10, lng: 25.10),
                    Coordinate(lat: 60.30, lng: 25.10), Coordinate(lat: 60.30, lng: 24.80),
                ])
            ]),
        City(
            name: "espoo",
            polygons: [
                .init(outer: [
                    Coordinate(lat: 60.10, lng: 24.50), Coordinate(lat: 60.10, lng: 24.80),
                    Coordinate(lat: 60.30, lng: 24.80), Coordinate(lat: 60.30, lng: 24.50),
                ])
            ]),
    ])

    // Central Helsinki: a pickup and points ~300 m, ~900 m and ~2.5 km from it, and one in Espoo (~15 km).
    static let pickup = Coordinate(lat: 60.1699, lng: 24.9384)
    static let near = Coordinate(lat: 60.1726, lng: 24.9384)
    static let middle = Coordinate(lat: 60.1780, lng: 24.9384)
    static let far = Coordinate(lat: 60.1924, lng: 24.9384)
    static let espoo = Coordinate(lat: 60.2055, lng: 24.6559)

    @Test(arguments: Implementation.available)
    func onlineProvidersWithFreshFixesAreFoundNearestFirstWithinTheRadius(_ implementation: Implementation) async throws
    {
        let (sut, time) = try makeSUT(implementation)
        for (id, at) in [("far", Self.far), ("near", Self.near), ("espoo", Self.espoo), ("middle", Self.middle)] {
            try await sut.setOnline(id, true, position: nil)
            try await sut.update(id, to: at, recordedAt: time.now)
        }
        let hits = try await sut.nearest(to: Self.pickup, limit: 10, within: 5_000) { _ in true }
        #expect(hits.map(\.id) == ["near", "middle", "far"])
        #expect(abs(hits[0].distance - StraightLineEstimator.distance(Self.pickup, Self.near)) < 5)
        #expect(hits[0].coordinate == Self.near)
        #expect(
            try await sut.nearest(to: Self.pickup, limit: 2, within: 5_000) { _ in true }.map(\.id) == [
                "near", "middle",
            ])
    }

    @Test(arguments: Implementation.available)
    func aPositionOlderThanTheFixLifetimeIsNeitherFoundNorShown(_ implementation: Implementation) async throws {
        let (sut, time) = try makeSUT(implementation)
        try await sut.setOnline("p1", true, position: Self.near)
        time.advance(by: 119)
        #expect(try await sut.position(of: "p1")?.coordinate == Self.near)
        #expect(try await sut.nearest(to: Self.pickup, limit: 5, within: 5_000) { _ in true }.map(\.id) == ["p1"])
        time.advance(by: 2)
        #expect(try await sut.position(of: "p1") == nil)
        #expect(try await sut.nearest(to: Self.pickup, limit: 5, within: 5_000) { _ in true }.isEmpty)
        #expect(try await sut.isOnline("p1"))
    }

    @Test(arguments: Implementation.available)
    func goingOfflineKeepsThePositionButHidesTheProvider(_ implementation: Implementation) async throws {
        let (sut, _) = try makeSUT(implementation)
        #expect(try await sut.setOnline("p1", true, position: Self.near))
        #expect(try await sut.setOnline("p1", false, position: nil) == false)
        #expect(try await sut.isOnline("p1") == false)
        #expect(try await sut.nearest(to: Self.pickup, limit: 5, within: 5_000) { _ in true }.isEmpty)
        #expect(try await sut.position(of: "p1")?.coordinate == Self.near)
    }

    /// The answer that wakes dispatch: true only on the step that makes a provider findable.
    @Test(arguments: Implementation.available)
    func aProviderBecomesFindableOnlyWhenOnlineWithAFreshFix(_ implementation: Implementation) async throws {
        let (sut, time) = try makeSUT(implementation)
        // offline: kept, not findable
        #expect(try await sut.update("p1", to: Self.near, recordedAt: time.now) == false)
        #expect(try await sut.nearest(to: Self.pickup, limit: 5, within: 5_000) { _ in true }.isEmpty)
        #expect(try await sut.setOnline("p1", true, position: nil))
        #expect(try await sut.nearest(to: Self.pickup, limit: 5, within: 5_000) { _ in true }.map(\.id) == ["p1"])
        time.advance(by: 5)
        #expect(try await sut.update("p1", to: Self.middle, recordedAt: time.now) == false)  // findable already

        #expect(try await sut.setOnline("p2", true, position: nil) == false)  // no position yet
        #expect(try await sut.update("p2", to: Self.far, recordedAt: time.now))
    }

    /// The provider's newest fix is where they are, though an older bucket still holds where they were.
    @Test(arguments: Implementation.available)
    func aNewerFixMovesTheProvider(_ implementation: Implementation) async throws {
        let (sut, time) = try makeSUT(implementation)
        try await sut.setOnline("p1", true, position: Self.near)
        time.advance(by: 45)
        try await sut.update("p1", to: Self.espoo, recordedAt: time.now)
        #expect(try await sut.nearest(to: Self.pickup, limit: 5, within: 5_000) { _ in true }.isEmpty)
        let there = try await sut.nearest(to: Self.espoo, limit: 5, within: 1_000) { _ in true }
        #expect(there.map(\.id) == ["p1"])
        #expect(there.first?.coordinate == Self.espoo)
        #expect(try await sut.position(of: "p1")?.coordinate == Self.espoo)
    }

    /// What the ops console lists: every online provider by id, with their position.
    @Test(arguments: Implementation.available)
    func onlineProvidersAreListedByIdWithTheirPositions(_ implementation: Implementation) async throws {
        let (sut, _) = try makeSUT(implementation)
        try await sut.setOnline("p2", true, position: Self.near)
        try await sut.setOnline("p1", true, position: nil)
        try await sut.setOnline("p3", true, position: Self.far)
        try await sut.setOnline("p3", false, position: nil)
        let online = try await sut.onlineProviders()
        #expect(online.map(\.id) == ["p1", "p2"])
        #expect(online.map(\.position?.coordinate) == [nil, Self.near])
    }

    @Test(arguments: Implementation.available)
    func excludedProvidersAreSkippedAndTheLimitIsFilledFromTheRest(_ implementation: Implementation) async throws {
        let (sut, _) = try makeSUT(implementation)
        for index in 0..<40 {
            try await sut.setOnline(
                "p\(index)", true,
                position: Coordinate(lat: Self.pickup.lat + Double(index) * 0.0005, lng: Self.pickup.lng))
        }
        let busy: Set<String> = Set((0..<35).map { "p\($0)" })
        let hits = try await sut.nearest(to: Self.pickup, limit: 3, within: 10_000) { !busy.contains($0) }
        #expect(hits.map(\.id) == ["p35", "p36", "p37"])
    }

    /// Dispatch and the nearby map stay inside a city: a search sees only the centre's city, whatever its radius.
    @Test(arguments: Implementation.available)
    func aSearchFindsOnlyProvidersInTheCityHoldingItsCentre(_ implementation: Implementation) async throws {
        let (sut, time) = try makeSUT(implementation, cities: Self.twoCities)
        try await sut.setOnline("helsinki-1", true, position: Self.near)
        try await sut.setOnline("espoo-1", true, position: Self.espoo)
        #expect(
            try await sut.nearest(to: Self.pickup, limit: 5, within: 50_000) { _ in true }.map(\.id) == ["helsinki-1"])
        #expect(try await sut.nearest(to: Self.espoo, limit: 5, within: 50_000) { _ in true }.map(\.id) == ["espoo-1"])

        // Moving across the border moves the provider to the other city's searches.
        time.advance(by: 40)
        try await sut.update("helsinki-1", to: Coordinate(lat: 60.2000, lng: 24.6600), recordedAt: time.now)
        #expect(try await sut.nearest(to: Self.pickup, limit: 5, within: 50_000) { _ in true }.isEmpty)
        #expect(
            try await sut.nearest(to: Self.espoo, limit: 5, within: 50_000) { _ in true }.map(\.id) == [
                "espoo-1", "helsinki-1",
            ])
    }

    @Test(arguments: Implementation.available)
    func aProviderOutsideEveryCityIsNotFindable(_ implementation: Implementation) async throws {
        let (sut, time) = try makeSUT(implementation, cities: Self.twoCities)
        let tallinn = Coordinate(lat: 59.437, lng: 24.7536)
        #expect(try await sut.setOnline("p1", true, position: tallinn) == false)
        #expect(try await sut.nearest(to: tallinn, limit: 5, within: 50_000) { _ in true }.isEmpty)
        #expect(try await sut.position(of: "p1")?.coordinate == tallinn)
        #expect(try await sut.update("p1", to: Self.near, recordedAt: time.now))
        #expect(try await sut.nearest(to: Self.pickup, limit: 5, within: 5_000) { _ in true }.map(\.id) == ["p1"])
    }
}

/// The Redis the tests use, read from `ENROUTE_TEST_REDIS_URL` (the RedisClient tests say how to start one).
enum TestRedisServer {
    static let url = ProcessInfo.processInfo.environment["ENROUTE_TEST_REDIS_URL"].flatMap { $0.isEmpty ? nil : $0 }
}
