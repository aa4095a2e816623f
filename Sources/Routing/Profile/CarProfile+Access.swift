extension CarProfile {
    /// Access keys for a car, most specific first: the first one with a recognised value decides.
    static let accessKeys = ["motorcar", "motor_vehicle", "vehicle", "access"]
    /// Access values that keep a car out.
    static let deniedAccess: Set<String> = [
        "no", "private", "agricultural", "forestry", "delivery", "emergency", "psv", "bus",
        "military", "agricultural;forestry", "forestry;agricultural",
    ]
    /// Access values that let a car in.
    static let allowedAccess: Set<String> = [
        "yes", "permissive", "designated", "destination", "customers", "customer",
        "public", "official", "permit", "residents",
    ]
    /// Allowed values that let a car in only to reach somewhere on the way, never through it (as OSRM's car
    /// profile restricts them).
    static let destinationAccess: Set<String> = ["destination", "customers", "customer", "permit", "residents"]

    /// How a car may use the way in `direction`: `.open`, `.destinationOnly`, or nil when it may not. At each key,
    /// most specific first, `KEY:direction` beats `KEY`; unknown values (`unknown`, conditional text) fall through
    /// to the next key. The key that decides whether a car may enter decides which, so `motorcar=yes` over
    /// `access=destination` is open.
    func carAccessLevel(_ tags: [String: String], direction: Direction) -> AccessLevel? {
        for candidate in direction == .forward ? Self.forwardAccessKeys : Self.backwardAccessKeys {
            guard let value = tags[candidate], let decision = Self.accessDecision(value) else { continue }
            guard decision else { return nil }
            return Self.destinationAccess.contains(value) ? .destinationOnly : .open
        }
        return .open
    }

    /// How far a car may use a way it may enter.
    enum AccessLevel { case open, destinationOnly }

    /// A direction along a way's node order.
    enum Direction { case forward, backward }
    static let forwardAccessKeys = accessKeys.flatMap { ["\($0):forward", $0] }
    static let backwardAccessKeys = accessKeys.flatMap { ["\($0):backward", $0] }

    /// Whether a node's own access tags (on a barrier) let a car through; nil when they say nothing.
    func nodeAccess(_ tags: [String: String]) -> Bool? {
        for key in Self.accessKeys {
            if let decision = Self.accessDecision(tags[key]) { return decision }
        }
        return nil
    }

    static func accessDecision(_ value: String?) -> Bool? {
        guard let value else { return nil }
        if deniedAccess.contains(value) { return false }
        if allowedAccess.contains(value) { return true }
        return nil
    }

    /// Which directions the way's one-way tagging allows, or nil for `reversible`/`alternating` (the direction
    /// changes by time, so a car cannot count on either). `oneway:motorcar` beats `oneway:motor_vehicle` beats
    /// `oneway`; without any, roundabouts and motorways are implied one-way.
    func onewayDirections(_ tags: [String: String], roadClass: RoadClass) -> (forward: Bool, backward: Bool)? {
        let value = tags["oneway:motorcar"] ?? tags["oneway:motor_vehicle"] ?? tags["oneway"]
        switch value {
        case "yes", "1", "true": return (true, false)
        case "-1", "reverse": return (false, true)
        case "reversible", "alternating": return nil
        case "no", "0", "false": return (true, true)
        default:
            let junction = tags["junction"]
            let implied = junction == "roundabout" || junction == "circular" || roadClass == .motorway
            return implied ? (true, false) : (true, true)
        }
    }
}
