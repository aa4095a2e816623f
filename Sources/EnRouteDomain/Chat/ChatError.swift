public import Foundation

/// Why a chat request was refused; the API maps each to one problem document.
public enum ChatError: Error, Sendable, Equatable {
    /// No such trip, or not the caller's conversation (the same answer either way).
    case notFound
    /// Ops read the conversation but do not write in it.
    case readOnly
    /// The text is not valid UTF-8.
    case invalidUTF8
    /// The text is empty or only whitespace.
    case empty
    /// The text holds U+0000, which not every store keeps.
    case nul
    /// The text is over the limit, in UTF-8 bytes.
    case tooLong(limit: Int)
    /// The `messageId` is empty, too long or holds spaces or control characters.
    case invalidMessageId
    /// The `messageId` was used already by this party for a different text.
    case messageIdReused
    /// The party sent too many messages; one more is allowed after `retryAfter` seconds.
    case rateLimited(retryAfter: TimeInterval)
    /// Writing is not possible yet (no provider) or any more (the trip ended), with the reason in words.
    case closed(reason: String)
}
