extension CarProfile {
    /// What a node costs a car passing it: seconds lost, and whether it blocks cars altogether.
    public struct NodeDelay: Sendable, Hashable {
        /// Seconds a car loses passing the node.
        public var seconds: Double
        /// A barrier a car cannot pass (a bollard, a private gate...).
        public var blocksCars: Bool

        /// A node that costs nothing and blocks nothing.
        public static let none = NodeDelay(seconds: 0, blocksCars: false)

        /// Makes a delay.
        public init(seconds: Double, blocksCars: Bool) {
            self.seconds = seconds
            self.blocksCars = blocksCars
        }
    }

    /// The delay and blocking of a node from its tags: `highway=traffic_signals|stop|give_way|crossing|mini_roundabout`
    /// cost seconds; a `barrier=*` not in `passableBarriers`, or a passable one whose access tags keep cars out,
    /// blocks; an unknown barrier value blocks too unless its access tags let cars through.
    public func nodeDelay(_ tags: [String: String]) -> NodeDelay {
        var seconds = 0.0
        if let highway = tags["highway"] {
            if highway == "crossing", let crossing = tags["crossing"],
                let refined = nodeDelaySeconds["crossing=\(crossing)"]
            {
                seconds += refined
            } else {
                seconds += nodeDelaySeconds[highway] ?? 0
            }
        }
        guard let barrier = tags["barrier"] else { return NodeDelay(seconds: seconds, blocksCars: false) }
        let access = nodeAccess(tags)
        let passable = passableBarriers.contains(barrier) ? access ?? true : access ?? false
        guard passable else { return NodeDelay(seconds: seconds, blocksCars: true) }
        return NodeDelay(seconds: seconds + (barrierDelaySeconds[barrier] ?? 0), blocksCars: false)
    }
}
