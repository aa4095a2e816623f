public import EnRouteModels

/// The one source of the rider's live trip (the rider app's live loop), shared by every screen that shows it.
///
/// It owns the trip state machine, the fixes' `seq` guard and the `LiveETA`, and runs one resync-then-stream loop over
/// the `LiveTripChannel` per trip however many screens follow it: the first follower starts the loop, the last one to
/// leave stops it. REST answers (a request, a cancel) go through `apply(_:)`, so every follower sees them too.
@MainActor
public final class LiveTripFeed {
    /// The rider's REST calls, for owners that request, cancel or resync.
    public nonisolated let api: any TripAPI
    /// The trip, fix and ETA as of the newest change.
    public private(set) var state = LiveTripState()

    private let channel: any LiveTripChannel
    private let clock: any Clock<Duration>
    private var machine: TripStateMachine
    private var loop: (tripID: String, generation: Int, task: Task<Void, Never>)?
    private var followers: [Int: Follower] = [:]
    private var nextID = 0

    /// A feed over `api` and `channel`; `clock` times the reconnect backoff; `logger` hears of state jumps.
    public init(
        api: any TripAPI, channel: any LiveTripChannel, clock: any Clock<Duration>,
        logger: any RideLogger = SystemRideLogger()
    ) {
        self.api = api
        self.channel = channel
        self.clock = clock
        self.machine = TripStateMachine(logger: logger)
    }

    /// Takes a trip from a REST answer (request, resync, cancel); an older version is dropped. A trip that is over
    /// stops its live loop, and its followers return.
    public func apply(_ trip: Trip) {
        guard machine.apply(trip) != .dropped, let current = machine.trip else { return }
        if state.trip?.id != current.id { state = LiveTripState() }  // a new trip: the old driver's fix is not its
        state.trip = current
        state.eta.apply(current)
        publish()
        if !current.state.isActive, let loop, loop.tripID == current.id { stopLoop() }
    }

    /// Follows `tripID` live: `handle` gets the current state at once (when it is this trip's) and then every change,
    /// synchronously as the feed applies it, so a follower never lags a change or misses one.
    ///
    /// Returns when the trip is over, when `handle` returns false, or when the calling task is cancelled; the last
    /// follower to leave stops the loop and returns only once its connection is closed.
    public func follow(tripID: String, _ handle: @escaping (LiveTripState) -> Bool) async {
        if let trip = state.trip, trip.id == tripID, !trip.state.isActive {
            _ = handle(state)
            return
        }
        if state.trip?.id == tripID, !handle(state) { return }
        let joined = startLoop(tripID)
        let id = nextID
        nextID += 1
        let (done, finish) = AsyncStream.makeStream(of: Never.self)
        followers[id] = Follower(generation: joined.generation, handle: handle, finish: finish)
        for await _ in done {}  // until finished by the feed, or this task is cancelled
        followers[id] = nil
        guard !followers.values.contains(where: { $0.generation == joined.generation }) else { return }
        if loop?.generation == joined.generation { loop = nil }
        joined.task.cancel()
        await joined.task.value  // the connection is closed once this returns
    }

    /// The loop for `tripID`, started unless it runs already; another trip's loop stops first.
    private func startLoop(_ tripID: String) -> (generation: Int, task: Task<Void, Never>) {
        if let loop, loop.tripID == tripID { return (loop.generation, loop.task) }
        stopLoop()
        let generation = nextID
        nextID += 1
        let live = LiveTripLoop(api: api, channel: channel, clock: clock)
        let task = Task { [weak self] in
            await live.run(tripID: tripID) { event in
                guard let self else { return false }
                self.receive(event)
                return self.isLive(tripID)
            }
            self?.loopEnded(generation)
        }
        loop = (tripID, generation, task)
        return (generation, task)
    }

    /// Cancels the running loop; its followers return once it has ended.
    private func stopLoop() {
        guard let loop else { return }
        self.loop = nil
        loop.task.cancel()
    }

    private func loopEnded(_ generation: Int) {
        if loop?.generation == generation { loop = nil }
        for (id, follower) in followers where follower.generation == generation {
            followers[id] = nil
            follower.finish.finish()
        }
    }

    private func isLive(_ tripID: String) -> Bool {
        guard let trip = state.trip, trip.id == tripID else { return true }  // not seen yet: keep listening
        return trip.state.isActive
    }

    private func receive(_ event: TripEvent) {
        switch event {
        case .tripUpdated(let trip):
            apply(trip)
        case .driverMoved(let location):
            // A fix without a trip to place it on, or not newer than the one shown, changes nothing.
            guard state.trip != nil, location.seq > state.driverLocation?.seq ?? .min else { return }
            state.driverLocation = location
            state.eta.apply(location)
            publish()
        }
    }

    private func publish() {
        for (id, follower) in followers.sorted(by: { $0.key < $1.key }) where !follower.handle(state) {
            followers[id] = nil
            follower.finish.finish()
        }
    }

    /// One `follow` call waiting for changes.
    private struct Follower {
        let generation: Int
        let handle: (LiveTripState) -> Bool
        let finish: AsyncStream<Never>.Continuation
    }
}
