/// The car profile over plain OSM tags: which ways and turns a car may use, how fast, and what nodes and turns
/// cost. Pure and table-driven: every number is a property with its default written down in the README.
public struct CarProfile: Sendable {
    /// Free-flow speed (km/h) by class when a way has no usable `maxspeed`.
    public var classSpeedKmh: [RoadClass: Double]
    /// Free-flow speed (km/h) for `highway=service` by `service=*`; lower than a plain service road.
    public var serviceSpeedKmh: [String: Double]
    /// Posted limits are multiplied by this: drivers rarely hold the limit between junctions (signals, stops
    /// and turns are costed separately, at nodes and turns).
    public var postedSpeedFactor: Double
    /// No edge is slower than this (km/h), whatever the tags say.
    public var minimumSpeedKmh: Double
    /// `maxspeed=none` is read as this posted limit (km/h) before the factor.
    public var unlimitedSpeedKmh: Double
    /// `maxspeed=walk` is read as this posted limit (km/h) before the factor.
    public var walkSpeedKmh: Double
    /// Country implicit limits (`FI:urban`, `DE:motorway`...) as posted limits in km/h.
    public var implicitLimitsKmh: [String: Double]
    /// Seconds a car loses at a node by its `highway=*` (or `crossing=*` refinement, keyed `crossing=VALUE`).
    public var nodeDelaySeconds: [String: Double]
    /// Seconds a car loses at a passable barrier, by `barrier=*`.
    public var barrierDelaySeconds: [String: Double]
    /// `barrier=*` values a car can pass (unless the node's own access tags forbid it).
    public var passableBarriers: Set<String>
    /// Turn cost by the turn's angle away from straight on: (degrees, near-side seconds, far-side seconds),
    /// ascending, interpolated linearly. Near side is the kerb side (right in right-hand traffic). The defaults
    /// sample OSRM's car profile: a logistic curve rising to 7.5 s, biased 1.075 towards the kerb side, plus up
    /// to 2 s for crossing oncoming traffic, so the two engines weigh the same turn alike.
    public var turnCostTable: [(degrees: Double, nearSideSeconds: Double, farSideSeconds: Double)]
    /// A turn sharper than this (degrees) is a U-turn.
    public var uTurnThresholdDegrees: Double
    /// Seconds for a U-turn (OSRM's car: 20 s on top of the sharpest turn's 7.5 s).
    public var uTurnSeconds: Double

    /// The profile with the defaults the table in docs/roads.md lists.
    public init() {
        classSpeedKmh = [
            .motorway: 90, .motorwayLink: 45,
            .trunk: 85, .trunkLink: 40,
            .primary: 65, .primaryLink: 30,
            .secondary: 55, .secondaryLink: 25,
            .tertiary: 40, .tertiaryLink: 20,
            .unclassified: 25, .residential: 25, .livingStreet: 10, .service: 15,
        ]
        serviceSpeedKmh = [
            "parking_aisle": 5, "parking": 5, "driveway": 8, "drive-through": 5, "drive-thru": 5, "alley": 10,
        ]
        postedSpeedFactor = 0.8
        minimumSpeedKmh = 5
        unlimitedSpeedKmh = 130
        walkSpeedKmh = 7
        implicitLimitsKmh = [
            "FI:urban": 50, "FI:rural": 80, "FI:motorway": 120, "FI:living_street": 20,
            "US:urban": 25 * Self.kmhPerMph, "US:rural": 55 * Self.kmhPerMph, "US:motorway": 65 * Self.kmhPerMph,
            "US:living_street": 15 * Self.kmhPerMph,
            "DE:urban": 50, "DE:rural": 100, "DE:motorway": 130, "DE:living_street": 7, "DE:zone30": 30,
            "DE:zone20": 20,
            "DE:bicycle_road": 30,
            "FR:urban": 50, "FR:rural": 80, "FR:motorway": 130, "FR:zone30": 30, "FR:living_street": 20, "FR:walk": 6,
            "GB:nsl_single": 60 * Self.kmhPerMph, "GB:nsl_dual": 70 * Self.kmhPerMph,
            "GB:motorway": 70 * Self.kmhPerMph,
            "GB:nsl_restricted": 30 * Self.kmhPerMph, "GB:urban": 30 * Self.kmhPerMph,
            "MC:urban": 50,
            "AD:urban": 50, "AD:rural": 90,
            "LI:urban": 50, "LI:rural": 80,
        ]
        nodeDelaySeconds = [
            "traffic_signals": 2, "stop": 2, "give_way": 1, "crossing": 0,
            "mini_roundabout": 2,
        ]
        barrierDelaySeconds = [
            "toll_booth": 20, "border_control": 60, "gate": 10, "lift_gate": 10, "swing_gate": 10,
            "sally_port": 10, "checkpoint": 30,
        ]
        passableBarriers = [
            "no", "entrance", "cattle_grid", "border_control", "toll_booth", "gate", "lift_gate",
            "swing_gate", "sally_port", "height_restrictor", "arch", "checkpoint", "kerb",
        ]
        turnCostTable = [
            (0, 0.01, 0.01), (15, 0.02, 0.26), (30, 0.05, 0.68), (45, 0.14, 1.54), (60, 0.37, 2.99),
            (75, 0.94, 5.13), (90, 2.11, 7.32), (105, 3.88, 8.66), (120, 5.59, 9.22), (135, 6.67, 9.41),
            (150, 7.17, 9.47), (170, 7.41, 9.49),
        ]
        uTurnThresholdDegrees = 170
        uTurnSeconds = 27.5
    }

    /// The default profile.
    public static let standard = CarProfile()

    static let kmhPerMph = 1.609344

    /// What a car makes of a way, or nil when a car may not use it at all.
    public func way(_ tags: [String: String]) -> WayAttributes? {
        guard let highway = tags["highway"], let roadClass = RoadClass(highway: highway) else { return nil }
        if tags["area"] == "yes" { return nil }
        if tags["impassable"] == "yes" || tags["smoothness"] == "impassable" || tags["status"] == "impassable" {
            return nil
        }
        if let construction = tags["construction"], !["no", "minor", "widening"].contains(construction) { return nil }
        if let proposed = tags["proposed"], proposed != "no" { return nil }
        if roadClass == .service, let service = tags["service"], service == "emergency_access" { return nil }

        guard var (forward, backward) = onewayDirections(tags, roadClass: roadClass) else { return nil }
        let forwardAccess = carAccessLevel(tags, direction: .forward),
            backwardAccess = carAccessLevel(tags, direction: .backward)
        forward = forward && forwardAccess != nil
        backward = backward && backwardAccess != nil
        guard forward || backward else { return nil }

        let plain = postedLimitKmh(tags["maxspeed"]) ?? implicitFallbackKmh(tags)
        let forwardPosted = postedLimitKmh(tags["maxspeed:forward"]) ?? plain
        let backwardPosted = postedLimitKmh(tags["maxspeed:backward"]) ?? plain
        let table = tableSpeedKmh(roadClass, service: tags["service"])
        let name = tags["name"].flatMap { $0.isEmpty ? nil : $0 }
        let ref = tags["ref"].flatMap { $0.isEmpty ? nil : $0 }
        let junction = tags["junction"]
        return WayAttributes(
            roadClass: roadClass, forward: forward, backward: backward,
            forwardSpeedKmh: effectiveSpeed(posted: forwardPosted, table: table),
            backwardSpeedKmh: effectiveSpeed(posted: backwardPosted, table: table),
            speedSource: forwardPosted == nil ? .classTable : .posted,
            name: name ?? ref, ref: ref,
            isRoundabout: junction == "roundabout" || junction == "circular",
            forwardDestinationOnly: forward && forwardAccess == .destinationOnly,
            backwardDestinationOnly: backward && backwardAccess == .destinationOnly
        )
    }

    /// The class table's speed, lowered for service roads with a `service=*` subtype listed.
    func tableSpeedKmh(_ roadClass: RoadClass, service: String?) -> Double {
        if roadClass == .service, let service, let speed = serviceSpeedKmh[service] { return speed }
        return classSpeedKmh[roadClass] ?? minimumSpeedKmh
    }

    func effectiveSpeed(posted: Double?, table: Double) -> Double {
        guard let posted else { return max(minimumSpeedKmh, table) }
        return max(minimumSpeedKmh, posted * postedSpeedFactor)
    }

    /// A limit stated elsewhere than `maxspeed`: `maxspeed:type`, `source:maxspeed` or `zone:maxspeed` (`DE:urban`,
    /// `DE:30`).
    func implicitFallbackKmh(_ tags: [String: String]) -> Double? {
        for key in ["maxspeed:type", "source:maxspeed", "zone:maxspeed"] {
            if let value = tags[key], value.contains(":"), let limit = postedLimitKmh(value) { return limit }
        }
        return nil
    }
}
