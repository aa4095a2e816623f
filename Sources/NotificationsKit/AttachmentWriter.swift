public import Foundation

/// Writes a downloaded image to a file the notification can attach.
public protocol AttachmentWriter: Sendable {
    /// The file's URL.
    func write(_ data: Data, suggestedName: String) throws -> URL
}
