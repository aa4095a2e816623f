public import Foundation

/// Downloads the rider's photo (a thumbnail) for the service extension.
public protocol ImageFetcher: Sendable {
    /// The image bytes; throws on failure, `CancellationError` when cancelled.
    func fetch(_ url: URL) async throws -> Data
}
