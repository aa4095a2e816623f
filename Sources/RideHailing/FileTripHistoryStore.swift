public import Foundation
import EnRouteModels

/// A `TripHistoryStore` as one JSON file in a directory the app gives (its caches directory, per account), for
/// Linux and iOS alike.
public struct FileTripHistoryStore: TripHistoryStore {
    /// The file the pages are kept in.
    public let fileURL: URL

    /// A store keeping its file in `directory`, which is created when missing.
    public init(directory: URL, fileName: String = "trip-history.json") {
        fileURL = directory.appendingPathComponent(fileName, isDirectory: false)
    }

    /// The kept pages; nil when there is no file yet. A file this version cannot read counts as none.
    public func load() async throws -> TripHistoryCache? {
        guard FileManager.default.fileExists(atPath: fileURL.path) else { return nil }
        let data = try Data(contentsOf: fileURL)
        return try? WireCoding.decoder().decode(TripHistoryCache.self, from: data)
    }

    /// Writes the pages atomically, so a crash mid-write leaves the previous file whole.
    public func save(_ cache: TripHistoryCache) async throws {
        try FileManager.default.createDirectory(
            at: fileURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try WireCoding.encoder().encode(cache).write(to: fileURL, options: .atomic)
    }
}
