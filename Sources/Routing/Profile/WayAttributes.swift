/// What the car profile makes of one OSM way: its class, which directions a car may drive, speeds and name.
public struct WayAttributes: Sendable, Hashable {
    /// Where a speed came from: a posted limit (`maxspeed`, after the free-flow factor) or the class table.
    public enum SpeedSource: Sendable, Hashable { case posted, classTable }

    /// The way's `highway=*` class.
    public var roadClass: RoadClass
    /// A car may drive along the way's node order.
    public var forward: Bool
    /// A car may drive against the way's node order.
    public var backward: Bool
    /// Free-flow speed along the node order, km/h.
    public var forwardSpeedKmh: Double
    /// Free-flow speed against the node order, km/h.
    public var backwardSpeedKmh: Double
    /// Where the forward speed came from.
    public var speedSource: SpeedSource
    /// The street name for guidance: `name`, else `ref`.
    public var name: String?
    /// The road number (`ref`), kept apart for guidance that shows both.
    public var ref: String?
    /// `junction=roundabout` or `circular`.
    public var isRoundabout: Bool
    /// Along the node order a car may drive only to reach somewhere on the way (`access=destination` and its kin).
    public var forwardDestinationOnly: Bool
    /// Against the node order a car may drive only to reach somewhere on the way.
    public var backwardDestinationOnly: Bool

    /// Makes attributes; the profile is the usual source, tests and hand-built graphs make their own.
    public init(
        roadClass: RoadClass, forward: Bool, backward: Bool, forwardSpeedKmh: Double, backwardSpeedKmh: Double,
        speedSource: SpeedSource, name: String? = nil, ref: String? = nil, isRoundabout: Bool = false,
        forwardDestinationOnly: Bool = false, backwardDestinationOnly: Bool = false
    ) {
        self.roadClass = roadClass
        self.forward = forward
        self.backward = backward
        self.forwardSpeedKmh = forwardSpeedKmh
        self.backwardSpeedKmh = backwardSpeedKmh
        self.speedSource = speedSource
        self.name = name
        self.ref = ref
        self.isRoundabout = isRoundabout
        self.forwardDestinationOnly = forwardDestinationOnly
        self.backwardDestinationOnly = backwardDestinationOnly
    }

    /// True when a car may drive only one way.
    public var isOneway: Bool { forward != backward }
}
