import Foundation
import Testing
import EnRouteModels
import EnRouteDomain
import Synchronization

/// The ETA error model: percentiles of actual ÷ predicted on completed legs, by bucket, with a stated default.
@Suite struct EtaCalibrationTests {
    /// Monday 2026-10-19 08:00 UTC.
    static let mondayMorning = Date(timeIntervalSince1970: 1_792_368_000 + 8 * 3600)

    static func sample(
        _ ratio: Double, hour: Int = 8, roadClass: String = "all", predicted: Double = 600
    ) -> EtaLegSample {
        EtaLegSample(
            tripId: UUID().uuidString, leg: "toPickup", roadClass: roadClass, hourOfWeek: hour,
            predictedSeconds: predicted,
            actualSeconds: predicted * ratio, recordedAt: mondayMorning)
    }

    @Test func theHourOfTheWeekCountsFromMondayMidnight() {
        #expect(EtaCalibration.hourOfWeek(Self.mondayMorning) == 8)
        #expect(EtaCalibration.hourOfWeek(Self.mondayMorning.addingTimeInterval(-9 * 3600)) == 167)  // Sunday 23:00
        #expect(EtaCalibration.hourOfWeek(Self.mondayMorning, in: TimeZone(secondsFromGMT: 2 * 3600)!) == 10)
        // Helsinki's clocks: UTC+3 in summer, UTC+2 in winter (a fixed offset read at start would drift by an hour).
        let helsinki = TimeZone(identifier: "Europe/Helsinki")!
        #expect(EtaCalibration.hourOfWeek(Self.mondayMorning, in: helsinki) == 11)  // 2026-10-19: still summer time
        // 2 November
        #expect(EtaCalibration.hourOfWeek(Self.mondayMorning.addingTimeInterval(14 * 86_400), in: helsinki) == 10)
    }

    @Test func recordedLegsSetTheBandToTheirTenthAndNinetiethPercentiles() {
        // Ratios 1.00, 1.01, … 1.99: p10 = 1.099, p90 = 1.891 (linear between closest ranks).
        let samples = (0..<100).map { Self.sample(1 + Double($0) / 100) }
        let band = EtaCalibration(samples: samples).band(hourOfWeek: 8)
        #expect(abs(band.low - 1.099) < 1e-9)
        #expect(abs(band.high - 1.891) < 1e-9)
        // The coverage is a parameter: 90 % is p5 to p95.
        let ninety = EtaCalibration(samples: samples, coverage: 0.9).band(hourOfWeek: 8)
        #expect(abs(ninety.low - 1.0495) < 1e-9 && abs(ninety.high - 1.9405) < 1e-9)
        #expect(band.lowExtra == 0 && band.highExtra == 0)
        #expect(band.source == "hour")
    }

    @Test func beforeTwentyLegsTheStatedDefaultApplies() {
        var calibration = EtaCalibration(samples: (0..<19).map { _ in Self.sample(2.0) })
        #expect(calibration.band(hourOfWeek: 8) == .default)
        #expect(EtaBand.default.low == 0.85 && EtaBand.default.high == 1.25 && EtaBand.default.highExtra == 120)
        calibration.add(Self.sample(2.0))
        #expect(calibration.band(hourOfWeek: 8).low == 2.0)
    }

    @Test func aThinBucketFallsBackToCoarserHistory() {
        // 30 legs at 08:00 on any road, 5 on primary roads at 17:00.
        var samples = (0..<30).map { _ in Self.sample(1.5, hour: 8) }
        samples += (0..<5).map { _ in Self.sample(3.0, hour: 17, roadClass: "primary") }
        let calibration = EtaCalibration(samples: samples)
        // Primary at 17:00 has 5: neither its class (5) nor its hour (5) is enough: everything (35) decides.
        let band = calibration.band(roadClass: "primary", hourOfWeek: 17)
        #expect(band.source == "all")
        #expect(band.low == 1.5)
        #expect(abs(band.high - EtaCalibration.percentile(samples.map(\.ratio).sorted(), 0.9)) < 1e-9)
        // Its own hour first when that has enough.
        #expect(calibration.band(hourOfWeek: 8).source == "hour")
    }

    @Test func legsWithoutAPredictionAreIgnored() {
        let calibration = EtaCalibration(samples: (0..<40).map { _ in Self.sample(1.0, predicted: 0) })
        #expect(calibration.sampleCount == 0)
        #expect(calibration.band(hourOfWeek: 8) == .default)
    }

    @Test func aPositionNoRoadIsNearKeepsTheStraightLineWindowCountedAndRetriedAfterTheThrottle() async throws {
        let metrics = RecordingMetrics()
        let log = Mutex<[String]>([])
        let estimator = RoadEstimator(
            roads: StubRoads(duration: 600, failRoute: .noSegment(index: 0)), metrics: metrics,
            log: .lines { line in log.withLock { $0.append(line) } })
        let trip = Self.assignedRide()
        let straight = StraightLineEstimator().refreshETA(trip, now: Self.mondayMorning)
        #expect(estimator.refreshETA(trip, now: Self.mondayMorning).etaLatest == straight.etaLatest)
        await estimator.settle()
        // Still the straight line, not asked again on every fix, asked again once the throttle has passed.
        #expect(
            estimator.refreshETA(trip, now: Self.mondayMorning.addingTimeInterval(10)).etaLatest
                == StraightLineEstimator().refreshETA(trip, now: Self.mondayMorning.addingTimeInterval(10)).etaLatest)
        #expect(estimator.recomputeCount == 1)
        _ = estimator.refreshETA(trip, now: Self.mondayMorning.addingTimeInterval(31))
        #expect(estimator.recomputeCount == 2)
        await estimator.settle()
        #expect(metrics.count("enroute_eta_fallback_total", ["reason": "noSegment"]) == 2)
        #expect(log.withLock { $0.first?.contains("straight-line ETA kept") } == true)
    }

    /// A fix that reaches the server 30 s after it was taken (queued in a dead zone) starts the road time at its own
    /// time: the provider has been driving for those 30 s. Clocks more than 2 minutes off are not believed.
    @Test func theWindowCountsFromWhenTheFixWasTakenNotWhenItArrived() async throws {
        let estimator = RoadEstimator(roads: StubRoads(duration: 600))
        var trip = TripRecord(
            id: "T1", kind: .ride, status: .ride(.driverAssigned), customerId: "c1",
            pickup: Coordinate(lat: 60.17, lng: 24.95), dropoff: Coordinate(lat: 60.16, lng: 24.94),
            createdAt: Self.mondayMorning)
        trip.providerId = "p1"
        let taken = Self.mondayMorning, now = taken.addingTimeInterval(30)
        trip.providerFix = ProviderFix(
            coordinate: Coordinate(lat: 60.16, lng: 24.95), heading: 0, speed: 0, recordedAt: taken, seq: 1)
        _ = estimator.refreshETA(trip, now: now)
        await estimator.settle()
        let late = estimator.refreshETA(trip, now: now)
        #expect(late.etaEarliest == taken.addingTimeInterval(600 * 0.85))
        #expect(late.etaLatest == taken.addingTimeInterval(600 * 1.25 + 120))
        // A phone clock an hour behind: counted from two minutes ago at most.
        trip.providerFix?.recordedAt = now.addingTimeInterval(-3600)
        let behind = estimator.refreshETA(trip, now: now)
        #expect(behind.etaLatest == now.addingTimeInterval(-120 + 600 * 1.25 + 120))
    }

    /// A ride whose provider, assigned on Monday morning, has one fix 1.1 km from the pickup.
    static func assignedRide() -> TripRecord {
        var trip = TripRecord(
            id: "T1", kind: .ride, status: .ride(.driverAssigned), customerId: "c1",
            pickup: Coordinate(lat: 60.17, lng: 24.95), dropoff: Coordinate(lat: 60.16, lng: 24.94),
            createdAt: mondayMorning)
        trip.providerId = "p1"
        trip.providerFix = ProviderFix(
            coordinate: Coordinate(lat: 60.16, lng: 24.95), heading: 0, speed: 0, recordedAt: mondayMorning, seq: 1)
        return trip
    }

    @Test func theRoadEstimatorUsesTheCalibratedBandForItsWindow() async throws {
        let store = InMemoryEtaSampleStore()
        for _ in 0..<20 { try await store.append(Self.sample(1.1)) }
        for _ in 0..<5 { try await store.append(Self.sample(1.4)) }
        let roads = StubRoads(duration: 600)
        let estimator = RoadEstimator(roads: roads, samples: store)
        let trip = Self.assignedRide()
        _ = estimator.refreshETA(trip, now: Self.mondayMorning)
        await estimator.settle()
        let refreshed = estimator.refreshETA(trip, now: Self.mondayMorning)
        let sorted = (Array(repeating: 1.1, count: 20) + Array(repeating: 1.4, count: 5)).sorted()
        let remaining = try #require(refreshed.etaLatest).timeIntervalSince(Self.mondayMorning)
        #expect(abs(remaining - (600 * EtaCalibration.percentile(sorted, 0.9)).rounded(.up)) <= 1)
        let soonest = try #require(refreshed.etaEarliest).timeIntervalSince(Self.mondayMorning)
        #expect(abs(soonest - 600 * 1.1) <= 1)
    }
}

extension EtaCalibrationTests {
    /// A leg on a primary road reads the primary roads' history, not the residential streets', and the leg it
    /// completes is kept under its class.
    @Test func theRoutesMainRoadClassPicksTheHistoryAndIsKeptWithTheLeg() async throws {
        let store = InMemoryEtaSampleStore()
        for _ in 0..<20 { try await store.append(Self.sample(1.0, roadClass: "primary")) }
        for _ in 0..<20 { try await store.append(Self.sample(1.6, roadClass: "residential")) }
        var roads = StubRoads(duration: 600)
        roads.roadClass = "primary"
        let estimator = RoadEstimator(roads: roads, samples: store)
        let trip = Self.assignedRide()
        _ = estimator.refreshETA(trip, now: Self.mondayMorning)
        await estimator.settle()
        let refreshed = estimator.refreshETA(trip, now: Self.mondayMorning)
        // All legs together would put the 90th percentile at 1.6 × 600 s; the primary roads' alone at 1.0 ×.
        let latest = try #require(refreshed.etaLatest).timeIntervalSince(Self.mondayMorning)
        #expect(abs(latest - 600) <= 1)

        var arrived = trip
        arrived.status = .ride(.driverArrived)
        estimator.tripCommitted(from: trip, to: arrived, at: Self.mondayMorning.addingTimeInterval(660))
        await estimator.settle()
        let kept = try store.recent(limit: 100).last
        #expect(kept?.roadClass == "primary" && kept?.tripId == "T1")
        #expect(abs((kept?.ratio ?? 0) - 1.1) < 0.01)
    }
}

/// Counts what the code under test counts.
final class RecordingMetrics: MetricsSink {
    private let counts = Mutex<[String: Double]>([:])
    func increment(_ name: String, labels: [String: String], by value: Double, help: String) {
        let key = name + labels.sorted { $0.key < $1.key }.map { "|\($0.key)=\($0.value)" }.joined()
        counts.withLock { $0[key, default: 0] += value }
    }
    func count(_ name: String, _ labels: [String: String] = [:]) -> Double {
        counts.withLock { $0[name + labels.sorted { $0.key < $1.key }.map { "|\($0.key)=\($0.value)" }.joined()] ?? 0 }
    }
}

/// A road network of one straight road: routes are the straight line at `duration` seconds.
struct StubRoads: RoadRouting {
    var duration: Double
    var failTable = false
    var costs: [Double] = []
    var failRoute: RoadRoutingError?
    var roadClass = "all"

    func route(
        from: Coordinate, to: Coordinate, heading: Double?, departure: Date
    ) async throws(RoadRoutingError) -> RoadLeg {
        if let failRoute { throw failRoute }
        let d = StraightLineEstimator.distance(from, to)
        let w = RoadWaypoint(location: from, name: "", distanceMeters: 0, bearing: 0)
        return RoadLeg(
            distanceMeters: d, durationSeconds: duration, geometry: [from, to],
            steps: [
                RouteManeuver(
                    type: "depart", modifier: nil, name: "", distanceMeters: d, durationSeconds: duration,
                    location: from,
                    bearingBefore: 0, bearingAfter: 0)
            ],
            start: w, end: RoadWaypoint(location: to, name: "", distanceMeters: 0, bearing: 0), roadClass: roadClass)
    }

    func table(
        sources: [Coordinate], destinations: [Coordinate], departure: Date
    ) async throws(RoadRoutingError) -> [[RoadCost?]] {
        if failTable { throw .unavailable("down") }
        return sources.indices.map { i in
            destinations.map { _ in
                i < costs.count ? RoadCost(durationSeconds: costs[i], distanceMeters: costs[i] * 8) : nil
            }
        }
    }

    func nearest(_ coordinate: Coordinate, heading: Double?) async throws(RoadRoutingError) -> RoadWaypoint {
        RoadWaypoint(location: coordinate, name: "", distanceMeters: 0, bearing: 0)
    }
}
