/// An OSM node: a point with its tags.
public struct OSMNode: Sendable, Hashable {
    /// The node's OSM id.
    public var id: Int64
    /// Latitude in degrees (WGS 84).
    public var lat: Double
    /// Longitude in degrees (WGS 84).
    public var lon: Double
    /// The node's tags; empty for most nodes.
    public var tags: [String: String]

    /// A node with the given id, position and tags.
    public init(id: Int64, lat: Double, lon: Double, tags: [String: String] = [:]) {
        self.id = id
        self.lat = lat
        self.lon = lon
        self.tags = tags
    }
}

/// An OSM way: an ordered list of node references with its tags.
public struct OSMWay: Sendable, Hashable {
    /// The way's OSM id.
    public var id: Int64
    /// The ids of its nodes, in order (a closed way repeats the first at the end).
    public var refs: [Int64]
    /// The way's tags.
    public var tags: [String: String]

    /// A way with the given id, node references and tags.
    public init(id: Int64, refs: [Int64], tags: [String: String] = [:]) {
        self.id = id
        self.refs = refs
        self.tags = tags
    }
}

/// The kind of object a relation member refers to.
public enum OSMMemberType: Int, Sendable, Hashable {
    /// A node member.
    case node = 0
    /// A way member.
    case way = 1
    /// A relation member.
    case relation = 2
}

/// One member of a relation: what it refers to and its role (for example `from`, `via`, `to`).
public struct OSMMember: Sendable, Hashable {
    /// The kind of object referred to.
    public var type: OSMMemberType
    /// The referred object's OSM id.
    public var ref: Int64
    /// The member's role; empty when it has none.
    public var role: String

    /// A member referring to `ref` of kind `type` with `role`.
    public init(type: OSMMemberType, ref: Int64, role: String) {
        self.type = type
        self.ref = ref
        self.role = role
    }
}

/// An OSM relation: ordered members with its tags.
public struct OSMRelation: Sendable, Hashable {
    /// The relation's OSM id.
    public var id: Int64
    /// Its members, in order.
    public var members: [OSMMember]
    /// The relation's tags.
    public var tags: [String: String]

    /// A relation with the given id, members and tags.
    public init(id: Int64, members: [OSMMember], tags: [String: String] = [:]) {
        self.id = id
        self.members = members
        self.tags = tags
    }
}

/// A latitude/longitude box in degrees.
public struct OSMBoundingBox: Sendable, Hashable {
    /// The southern edge.
    public var minLat: Double
    /// The western edge.
    public var minLon: Double
    /// The northern edge.
    public var maxLat: Double
    /// The eastern edge.
    public var maxLon: Double

    /// A box from its edges.
    public init(minLat: Double, minLon: Double, maxLat: Double, maxLon: Double) {
        self.minLat = minLat
        self.minLon = minLon
        self.maxLat = maxLat
        self.maxLon = maxLon
    }
}

/// What a PBF file's OSMHeader block says about it.
public struct OSMHeader: Sendable, Hashable {
    /// The box the file claims to cover, when the writer gave one.
    public var boundingBox: OSMBoundingBox?
    /// Features a reader must understand to read the file (all are supported, or the reader refused the file).
    public var requiredFeatures: [String]
    /// Features a reader may use (for example `Sort.Type_then_ID`).
    public var optionalFeatures: [String]
    /// The program that wrote the file, when given.
    public var writingProgram: String?
    /// The data's source, when given.
    public var source: String?
}
