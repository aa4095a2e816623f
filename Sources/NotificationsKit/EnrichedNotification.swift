public import Foundation

/// What the service extension hands back: the text to show and an optional photo file.
public struct EnrichedNotification: Equatable, Sendable {
    public var title: String
    public var body: String
    public var attachment: URL?
    /// The attachment's Uniform Type Identifier ("public.jpeg"), for the attachment's type hint option.
    public var attachmentTypeHint: String?

    public init(title: String, body: String, attachment: URL? = nil, attachmentTypeHint: String? = nil) {
        self.title = title; self.body = body; self.attachment = attachment; self.attachmentTypeHint = attachmentTypeHint
    }
}
