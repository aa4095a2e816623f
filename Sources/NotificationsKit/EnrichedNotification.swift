public import Foundation

/// What the service extension hands back: the text to show and an optional photo file.
public struct EnrichedNotification: Equatable, Sendable {
    public var title: String
    public var body: String
    public var attachment: URL?

    public init(title: String, body: String, attachment: URL? = nil) { self.title = title; self.body = body; self.attachment = attachment }
}
