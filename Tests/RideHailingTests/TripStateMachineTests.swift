import Testing
import EnRouteModels
@testable import RideHailing

@Suite struct TripStateMachineTests {
    private func makeSUT(startingAt state: TripState, version: Int = 5) -> (TripStateMachine, RecordingRideLogger) {
        let logger = RecordingRideLogger()
        var machine = TripStateMachine(logger: logger)
        machine.apply(Fixtures.trip(state, version: version))
        return (machine, logger)
    }

    @Test func theFirstUpdateIsTakenAsIs() {
        var machine = TripStateMachine(logger: RecordingRideLogger())
        #expect(machine.apply(Fixtures.trip(.onTrip, version: 9)) == .applied)
        #expect(machine.trip == Fixtures.trip(.onTrip, version: 9))
    }

    /// Every pair of states: allowed moves apply quietly, the rest are accepted but reported.
    @Test(arguments: TripState.allCases, TripState.allCases)
    func aNewerVersionIsAlwaysAcceptedAndJumpsAreReported(from: TripState, to: TripState) {
        var (machine, logger) = makeSUT(startingAt: from)
        let outcome = machine.apply(Fixtures.trip(to, version: 6))
        let allowed = from == to || TripStateMachine.allowed[from, default: []].contains(to)
        #expect(outcome == (allowed ? .applied : .jumped(from: from, to: to)))
        #expect(machine.trip?.state == to)
        #expect(machine.trip?.version == 6)
        #expect(logger.warnings.count == (allowed ? 0 : 1))
        if !allowed { #expect(logger.warnings.first?.contains("\(from.rawValue) -> \(to.rawValue)") == true) }
    }

    @Test(arguments: [4, 5])
    func anOlderOrDuplicateVersionIsDropped(version: Int) {
        var (machine, logger) = makeSUT(startingAt: .driverAssigned, version: 5)
        #expect(machine.apply(Fixtures.trip(.driverArrived, version: version)) == .dropped)
        #expect(machine.trip == Fixtures.trip(.driverAssigned, version: 5))
        #expect(logger.warnings.isEmpty)
    }

    @Test func anotherTripReplacesTheCurrentOneWhateverItsVersion() {
        var (machine, logger) = makeSUT(startingAt: .completed, version: 12)
        #expect(machine.apply(Fixtures.trip(.searching, version: 1, id: "T-2")) == .applied)
        #expect(machine.trip?.id == "T-2")
        #expect(logger.warnings.isEmpty)
    }

    @Test func theTableMatchesTheSeedDiagram() {
        #expect(
            TripStateMachine.allowed == [
                .searching: [.driverAssigned, .noDriversFound, .cancelled],
                .driverAssigned: [.driverArrived, .searching, .cancelled],
                .driverArrived: [.onTrip, .cancelled],
                .onTrip: [.completed],
                .completed: [], .cancelled: [], .noDriversFound: [],
            ])
    }
}
