import Foundation

/// The OSM extracts shipped in the repository's `data/osm/`.
enum OSMExtracts {
    /// The repository root, three levels above this file.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The path of `data/osm/<name>`.
    static func path(_ name: String) -> String {
        root.appendingPathComponent("data/osm").appendingPathComponent(name).path
    }

    /// The bytes of `data/osm/<name>`.
    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(name))))
    }
}
