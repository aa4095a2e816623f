/// The compact binary graph file: a `RoadNetwork` and its profile's turn costs, little-endian, in checksummed
/// sections that a reader finds through a section table.
///
/// Layout (all integers little-endian, sections 8-byte aligned):
/// - header, 32 bytes: magic `ENROUTEG`, version `UInt32`, section count `UInt32`, file length `UInt64`,
///   CRC-32 of the header with this field zeroed `UInt32`, CRC-32 of the section table `UInt32`;
/// - section table, 32 bytes an entry: tag (4 ASCII bytes), reserved `UInt32`, offset `UInt64`, length `UInt64`,
///   CRC-32 of the section's bytes `UInt32`, reserved `UInt32`;
/// - the sections: `META` (profile and build metadata), `NODE`, `EDGE`, `GEOM`, `NAME`, `REST`, and optionally the
///   router's prebuilt parts, both or neither: `TURN` (the edge-based turn graph) and `CHIE` (its contraction
///   hierarchy). Their layouts are in `RoadGraphFile+Routing.swift`.
///
/// A reader skips sections it does not know, so a later section can be added without a new version (a file
/// without `TURN`/`CHIE`, as version 1 first wrote it, still loads and its hierarchy is built at load); the
/// version changes only when an existing section changes shape.
public enum RoadGraphFile {
    /// The first eight bytes of every graph file.
    public static let magic: [UInt8] = Array("ENROUTEG".utf8)
    /// The format version this build writes and reads.
    public static let version: UInt32 = 1

    static let headerSize = 32
    static let tableEntrySize = 32

    /// What a graph file holds besides the network: the profile's turn costs and free-form build facts.
    public struct Metadata: Sendable, Equatable {
        /// One row of the turn-cost table: the angle in degrees and its near-side and far-side seconds.
        public struct TurnCostRow: Sendable, Equatable {
            /// The turn's angle away from straight on, in degrees.
            public var degrees: Double
            /// Seconds for a turn of this angle to the kerb side.
            public var nearSideSeconds: Double
            /// Seconds for a turn of this angle across oncoming traffic.
            public var farSideSeconds: Double

            /// A row of the turn-cost table.
            public init(degrees: Double, nearSideSeconds: Double, farSideSeconds: Double) {
                self.degrees = degrees
                self.nearSideSeconds = nearSideSeconds
                self.farSideSeconds = farSideSeconds
            }
        }

        /// The profile's name (`car`).
        public var profileName: String
        /// Which side of the road traffic keeps to.
        public var drivingSide: CarProfile.DrivingSide
        /// The profile's turn-cost table, ascending by angle.
        public var turnCostTable: [TurnCostRow]
        /// A turn sharper than this (degrees) is a U-turn.
        public var uTurnThresholdDegrees: Double
        /// Seconds for a U-turn.
        public var uTurnSeconds: Double
        /// Facts about the build (source file, builder, minimum component size...), written sorted by key.
        public var build: [String: String]

        /// The metadata of a network built with `profile`.
        public init(
            profileName: String = "car", profile: CarProfile = .standard,
            drivingSide: CarProfile.DrivingSide = .right, build: [String: String] = [:]
        ) {
            self.profileName = profileName
            self.drivingSide = drivingSide
            turnCostTable = profile.turnCostTable.map {
                TurnCostRow(degrees: $0.degrees, nearSideSeconds: $0.nearSideSeconds, farSideSeconds: $0.farSideSeconds)
            }
            uTurnThresholdDegrees = profile.uTurnThresholdDegrees
            uTurnSeconds = profile.uTurnSeconds
            self.build = build
        }

        /// The turn costs these settings describe.
        public var turnCosts: TurnCosts {
            var profile = CarProfile()
            profile.turnCostTable = turnCostTable.map { ($0.degrees, $0.nearSideSeconds, $0.farSideSeconds) }
            profile.uTurnThresholdDegrees = uTurnThresholdDegrees
            profile.uTurnSeconds = uTurnSeconds
            return TurnCosts(profile: profile, drivingSide: drivingSide)
        }
    }

    /// A decoded graph file: the network (with the metadata's turn costs) and the metadata.
    public struct Contents: Sendable {
        /// The road network.
        public var network: RoadNetwork
        /// The profile and build metadata.
        public var metadata: Metadata
        /// The stored edge-based turn graph, nil in a file written without it.
        public var graph: EdgeBasedGraph?
        /// The stored contraction hierarchy over `graph`, nil in a file written without it.
        public var hierarchy: ContractionHierarchy?
    }

    /// The sections of version 1, by tag.
    enum Section: String, CaseIterable {
        case metadata = "META", nodes = "NODE", edges = "EDGE", geometry = "GEOM", names = "NAME", restrictions = "REST"
        case turnGraph = "TURN", hierarchy = "CHIE", access = "ACCS"

        /// The name errors use.
        var name: String {
            switch self {
            case .metadata: "metadata"
            case .nodes: "nodes"
            case .edges: "edges"
            case .geometry: "geometry"
            case .names: "names"
            case .restrictions: "restrictions"
            case .turnGraph: "turn graph"
            case .hierarchy: "contraction hierarchy"
            case .access: "edge access"
            }
        }

        var tag: UInt32 {
            Array(rawValue.utf8).enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
        }
    }
}

/// Why a graph file could not be read, naming the part of the file that is wrong.
public enum RoadGraphFileError: Error, Equatable, CustomStringConvertible {
    /// The file does not start with the graph file magic.
    case notAGraphFile
    /// The file is of a version this build does not read.
    case unsupportedVersion(found: UInt32, supported: UInt32)
    /// The file ends before the named part does.
    case truncated(section: String, detail: String)
    /// The named part's bytes do not match their checksum.
    case checksumMismatch(section: String)
    /// The named part is well-formed bytes with values that cannot be a road network.
    case invalid(section: String, detail: String)
    /// A section this version needs is absent.
    case missingSection(String)
    /// The file could not be opened or written.
    case io(path: String, detail: String)

    public var description: String {
        switch self {
        case .notAGraphFile: "not an EnRoute graph file (wrong magic)"
        case let .unsupportedVersion(found, supported):
            "graph file version \(found) is not supported (this build reads version \(supported); rebuild the file "
                + "with this enroute)"
        case let .truncated(section, detail): "truncated in \(section): \(detail)"
        case let .checksumMismatch(section): "checksum mismatch in \(section): the file is corrupted"
        case let .invalid(section, detail): "invalid \(section): \(detail)"
        case let .missingSection(section): "missing section: \(section)"
        case let .io(path, detail): "\(path): \(detail)"
        }
    }
}
