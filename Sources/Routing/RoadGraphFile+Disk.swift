import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension RoadGraphFile {
    /// Writes `network` to `path` atomically: a temporary file beside it, flushed, then renamed over `path`.
    /// The turn graph and hierarchy are stored too when given (both built from `network`).
    public static func write(
        _ network: RoadNetwork, metadata: Metadata = Metadata(),
        routing: (graph: EdgeBasedGraph, hierarchy: ContractionHierarchy)? = nil,
        to path: String
    ) throws(RoadGraphFileError) {
        let bytes = encode(network, metadata: metadata, routing: routing)
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(
                ".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString).tmp")
        do {
            guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
                throw RoadGraphFileError.io(path: path, detail: "cannot create \(temporary.path)")
            }
            let handle = try FileHandle(forWritingTo: temporary)
            defer { try? handle.close() }
            try handle.write(contentsOf: bytes)
            try handle.synchronize()
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw (error as? RoadGraphFileError)
                ?? .io(path: path, detail: "cannot write: \(error.localizedDescription)")
        }
        guard rename(temporary.path, path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw .io(path: path, detail: "cannot rename the written file into place: \(reason)")
        }
    }

    /// The network in the graph file at `path`, memory-mapped and checked throughout.
    public static func read(_ path: String) throws(RoadGraphFileError) -> RoadNetwork {
        try readContents(path).network
    }

    /// The network and metadata in the graph file at `path`, memory-mapped and checked throughout.
    public static func readContents(_ path: String) throws(RoadGraphFileError) -> Contents {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .io(path: path, detail: "no such file")
        }
        guard !isDirectory.boolValue else { throw .io(path: path, detail: "is a directory, not a graph file") }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw .io(path: path, detail: "cannot read: \(error.localizedDescription)")
        }
        do {
            return try data.withUnsafeBytes { try decode($0) }
        } catch let error as RoadGraphFileError {
            throw error
        } catch {
            throw .io(path: path, detail: "cannot read: \(error)")
        }
    }
}
