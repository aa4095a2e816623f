extension CarProfile {
    /// One member of an OSM relation, as the reader hands it over.
    public struct Member: Sendable, Hashable {
        /// What the member refers to.
        public enum Kind: Sendable, Hashable { case node, way, relation }

        /// Node, way or relation.
        public var kind: Kind
        /// The OSM id of the member.
        public var ref: Int64
        /// The member's role (`from`, `via`, `to`...).
        public var role: String

        /// Makes a member.
        public init(_ kind: Kind, _ ref: Int64, role: String) {
            self.kind = kind
            self.ref = ref
            self.role = role
        }
    }

    /// A turn restriction that applies to cars.
    public struct Restriction: Sendable, Hashable {
        /// `no_*` forbids the turn; `only_*` forbids every other turn from `from` at the via.
        public enum Kind: Sendable, Hashable { case no, only }
        /// The restriction's via: a node, or a chain of ways in member order.
        public enum Via: Sendable, Hashable {
            case node(Int64)
            case ways([Int64])
        }

        /// Prohibitive or mandatory.
        public var kind: Kind
        /// The manoeuvre after the prefix: `left_turn`, `right_turn`, `straight_on`, `u_turn`, `entry`, `exit`.
        public var maneuver: String
        /// The ways the restriction starts from (several only for `no_entry`).
        public var from: [Int64]
        /// Where the turn happens.
        public var via: Via
        /// The ways it leads to (several only for `no_exit`).
        public var to: [Int64]

        /// Makes a restriction; `restriction(_:members:)` is the usual source.
        public init(kind: Kind, maneuver: String, from: [Int64], via: Via, to: [Int64]) {
            self.kind = kind
            self.maneuver = maneuver
            self.from = from
            self.via = via
            self.to = to
        }
    }

    /// Why a relation was not taken as a car turn restriction.
    public enum RestrictionRejection: Error, Sendable, Hashable {
        /// `type` is not `restriction`.
        case notARestriction
        /// It applies to other vehicles only, or exempts cars (`except=motorcar`); the associated text says which tag.
        case notForCars(String)
        /// Only a `restriction:conditional` (time-dependent) value, which this profile does not evaluate.
        case conditionalOnly
        /// The value is not `no_*` or `only_*` with a known manoeuvre.
        case unknownValue(String)
        /// No `from` way, or a `from` member that is not a way.
        case missingFrom
        /// No `to` way, or a `to` member that is not a way.
        case missingTo
        /// Several `from` (or `to`) ways where the restriction allows one.
        case ambiguous(role: String, count: Int)
        /// No via member.
        case missingVia
        /// A via that mixes nodes and ways, holds several nodes, or is a relation.
        case badVia
        /// A `from`, `via` or `to` member that is a node or relation where a way is required.
        case wrongMemberKind(role: String)
    }

    static let maneuvers: Set<String> = ["left_turn", "right_turn", "straight_on", "u_turn", "entry", "exit"]
    static let carModes: Set<String> = ["motorcar", "motor_vehicle", "vehicle"]

    /// Parses a relation into a car turn restriction: `type=restriction` with `restriction:motorcar`,
    /// `restriction:motor_vehicle`, `restriction:vehicle` or `restriction` (most specific first), skipped when
    /// `except` names a car mode; members `from` (way), `via` (one node or one or more ways), `to` (way);
    /// other roles are ignored.
    public func restriction(_ tags: [String: String], members: [Member]) -> Result<Restriction, RestrictionRejection> {
        guard tags["type"] == "restriction" else { return .failure(.notARestriction) }
        if let except = tags["except"] {
            let modes = except.split(separator: ";").map { String($0.filter { $0 != " " }) }
            if let mode = modes.first(where: Self.carModes.contains) { return .failure(.notForCars("except=\(mode)")) }
        }
        let value =
            tags["restriction:motorcar"] ?? tags["restriction:motor_vehicle"] ?? tags["restriction:vehicle"]
            ?? tags["restriction"]
        guard let value else {
            if tags["restriction:conditional"] != nil { return .failure(.conditionalOnly) }
            let other = tags.keys.filter { $0.hasPrefix("restriction:") }.sorted().first
            return .failure(other.map { .notForCars($0) } ?? .unknownValue(""))
        }
        let kind: Restriction.Kind
        let maneuver: String
        if value.hasPrefix("no_") {
            kind = .no
            maneuver = String(value.dropFirst(3))
        } else if value.hasPrefix("only_") {
            kind = .only
            maneuver = String(value.dropFirst(5))
        } else {
            return .failure(.unknownValue(value))
        }
        guard Self.maneuvers.contains(maneuver) else { return .failure(.unknownValue(value)) }

        let from = members.filter { $0.role == "from" }
        let to = members.filter { $0.role == "to" }
        let via = members.filter { $0.role == "via" }
        if from.contains(where: { $0.kind != .way }) { return .failure(.wrongMemberKind(role: "from")) }
        if to.contains(where: { $0.kind != .way }) { return .failure(.wrongMemberKind(role: "to")) }
        guard !from.isEmpty else { return .failure(.missingFrom) }
        guard !to.isEmpty else { return .failure(.missingTo) }
        if from.count > 1, !(kind == .no && maneuver == "entry") {
            return .failure(.ambiguous(role: "from", count: from.count))
        }
        if to.count > 1, !(kind == .no && maneuver == "exit") {
            return .failure(.ambiguous(role: "to", count: to.count))
        }

        let parsedVia: Restriction.Via
        switch (via.filter { $0.kind == .node }.count, via.filter { $0.kind == .way }.count, via.count) {
        case (0, 0, 0): return .failure(.missingVia)
        case (1, 0, 1): parsedVia = .node(via[0].ref)
        case (0, let ways, let all) where ways == all: parsedVia = .ways(via.map(\.ref))
        default: return .failure(.badVia)
        }
        return .success(
            Restriction(kind: kind, maneuver: maneuver, from: from.map(\.ref), via: parsedVia, to: to.map(\.ref)))
    }
}
