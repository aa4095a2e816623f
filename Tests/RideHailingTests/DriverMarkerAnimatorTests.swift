import Testing
import EnRouteModels
import TestSupport
@testable import RideHailing

@Suite struct DriverMarkerAnimatorTests {
    private func makeSUT() -> (DriverMarkerAnimator, ManualClock) {
        let clock = ManualClock()
        return (DriverMarkerAnimator(clock: clock), clock)
    }

    @Test func nothingIsDrawnBeforeTheFirstLocation() {
        let (animator, _) = makeSUT()
        #expect(animator.frame() == nil)
    }

    @Test func theFirstLocationIsPlacedWithoutAnimation() {
        var (animator, _) = makeSUT()
        #expect(animator.handle(Fixtures.location(seq: 1, lat: 1, lng: 2, heading: 90)) == .jumped)
        #expect(
            animator.frame() == MarkerFrame(coordinate: Coordinate(lat: 1, lng: 2), heading: 90, isAnimating: false))
    }

    @Test(arguments: [Int64(3), 2])
    func anOlderOrRepeatedSeqIsIgnored(seq: Int64) async {
        var (animator, clock) = makeSUT()
        animator.handle(Fixtures.location(seq: 3, lat: 0, lng: 0))
        await clock.advance(by: .seconds(1))
        #expect(animator.handle(Fixtures.location(seq: seq, lat: 5, lng: 5)) == .ignored)
        #expect(animator.frame()?.coordinate == Coordinate(lat: 0, lng: 0))
    }

    @Test func movesLinearlyOverTwoAndAHalfSeconds() async throws {
        var (animator, clock) = makeSUT()
        animator.handle(Fixtures.location(seq: 1, lat: 0, lng: 0, heading: 0))
        await clock.advance(by: .seconds(1))
        #expect(animator.handle(Fixtures.location(seq: 2, lat: 1, lng: 2, heading: 90)) == .animating)
        let start = animator.now

        let start0 = try #require(animator.frame(at: start))
        #expect(start0 == MarkerFrame(coordinate: Coordinate(lat: 0, lng: 0), heading: 0, isAnimating: true))
        let half = try #require(animator.frame(at: start + .milliseconds(1250)))
        #expect(half == MarkerFrame(coordinate: Coordinate(lat: 0.5, lng: 1), heading: 45, isAnimating: true))
        let end = try #require(animator.frame(at: start + .milliseconds(2500)))
        #expect(end == MarkerFrame(coordinate: Coordinate(lat: 1, lng: 2), heading: 90, isAnimating: false))
        #expect(animator.frame(at: start + .seconds(60)) == end)

        await clock.advance(by: .milliseconds(1250))
        #expect(animator.frame() == half)
        #expect(animator.position(at: animator.now) == half.coordinate)
        #expect(animator.heading(at: animator.now) == 45)
    }

    /// A new fix mid-move starts from where the marker is drawn, not from the old target.
    @Test func aNewLocationMidMoveStartsFromTheInterpolatedPosition() async throws {
        var (animator, clock) = makeSUT()
        animator.handle(Fixtures.location(seq: 1, lat: 0, lng: 0))
        await clock.advance(by: .seconds(1))
        animator.handle(Fixtures.location(seq: 2, lat: 2, lng: 0))
        await clock.advance(by: .milliseconds(1250))  // halfway: lat 1
        #expect(animator.handle(Fixtures.location(seq: 3, lat: 2, lng: 4)) == .animating)
        let now = animator.now
        #expect(animator.position(at: now) == Coordinate(lat: 1, lng: 0))
        #expect(animator.position(at: now + .milliseconds(1250)) == Coordinate(lat: 1.5, lng: 2))
        #expect(animator.position(at: now + .milliseconds(2500)) == Coordinate(lat: 2, lng: 4))
    }

    /// Over 10 s without an update (background, offline), the marker jumps rather than crossing the city.
    @Test(arguments: [
        (Duration.seconds(10), DriverMarkerAnimator.Outcome.animating),
        (.milliseconds(10_001), .jumped),
        (.seconds(90), .jumped),
    ])
    func aGapOverTenSecondsJumps(gap: Duration, expected: DriverMarkerAnimator.Outcome) async {
        var (animator, clock) = makeSUT()
        animator.handle(Fixtures.location(seq: 1, lat: 0, lng: 0))
        await clock.advance(by: gap)
        #expect(animator.handle(Fixtures.location(seq: 2, lat: 1, lng: 1)) == expected)
        let frame = animator.frame()
        #expect(frame?.coordinate == (expected == .jumped ? Coordinate(lat: 1, lng: 1) : Coordinate(lat: 0, lng: 0)))
        #expect(frame?.isAnimating == (expected == .animating))
    }

    /// The gap is measured from the previous accepted update, not from the first one.
    @Test func theGapIsMeasuredFromTheLastAcceptedUpdate() async {
        var (animator, clock) = makeSUT()
        animator.handle(Fixtures.location(seq: 1))
        await clock.advance(by: .seconds(8))
        animator.handle(Fixtures.location(seq: 2))
        await clock.advance(by: .seconds(8))
        #expect(animator.handle(Fixtures.location(seq: 3)) == .animating)
    }

    /// Heading turns the short way round, through north when that is shorter.
    @Test(arguments: [(350.0, 10.0, 0.0), (10, 350, 0), (0, 90, 45), (270, 0, 315), (90, 0, 45), (180, 270, 225)])
    func headingTurnsTheShortWay(from: Double, to: Double, halfway: Double) async {
        var (animator, clock) = makeSUT()
        animator.handle(Fixtures.location(seq: 1, heading: from))
        await clock.advance(by: .seconds(1))
        animator.handle(Fixtures.location(seq: 2, heading: to))
        #expect(animator.heading(at: animator.now + .milliseconds(1250)) == halfway)
        #expect(animator.heading(at: animator.now + .seconds(3)) == to)
    }
}
