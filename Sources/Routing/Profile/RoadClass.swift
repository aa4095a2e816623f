/// The car-routable classes of OSM's `highway=*`, most important first; anything else is not routable by car.
public enum RoadClass: String, Sendable, CaseIterable, Hashable {
    case motorway, motorwayLink = "motorway_link"
    case trunk, trunkLink = "trunk_link"
    case primary, primaryLink = "primary_link"
    case secondary, secondaryLink = "secondary_link"
    case tertiary, tertiaryLink = "tertiary_link"
    case unclassified, residential
    case livingStreet = "living_street"
    case service

    /// The class for a `highway=*` value, or nil when cars do not route on it (track, path, pedestrian, road...).
    public init?(highway: String) {
        self.init(rawValue: highway)
    }

    /// The OSM `highway=*` value this class stands for.
    public var highwayValue: String { rawValue }

    /// True for the `*_link` ramps and slip roads.
    public var isLink: Bool { rawValue.hasSuffix("_link") }
}
