public import EnRouteModels

/// Everything the tracking screen draws, in one value.
public struct OrderTrackingViewState: Equatable, Sendable {
    /// One line of the step list.
    public struct StepRow: Equatable, Sendable {
        /// Done, current or still to come.
        public enum Progress: Equatable, Sendable { case done, current, upcoming }
        public let step: OrderStep
        public let progress: Progress
        public var title: String { step.title }
        public init(step: OrderStep, progress: Progress) { self.step = step; self.progress = progress }
    }

    /// "On the way", or "Getting your order…" before the first snapshot.
    public let title: String
    /// placed … delivered, with the current one marked; empty before the first snapshot
    public let steps: [StepRow]
    /// "Arriving 18:42–18:46" · "Running a little late" · "ETA updating"
    public let eta: String
    /// "1 stop before yours" while the courier hands over other orders first; nil otherwise.
    public let stopsBefore: String?
    /// live, stale(label: "Updated 40 s ago"), or hidden
    public let riderPin: RiderPin
    /// a cancelled or problem message, if any
    public let banner: String?
    /// Home, for the map; nil before the first snapshot.
    public let destination: Coordinate?
    /// True until the user pans: the camera frames rider and home by itself.
    public let cameraFollows: Bool

    /// A view state with every field given.
    public init(
        title: String, steps: [StepRow], eta: String, riderPin: RiderPin, banner: String?,
        destination: Coordinate?, cameraFollows: Bool, stopsBefore: String? = nil
    ) {
        self.title = title; self.steps = steps; self.eta = eta; self.riderPin = riderPin
        self.banner = banner; self.destination = destination; self.cameraFollows = cameraFollows
        self.stopsBefore = stopsBefore
    }
}
