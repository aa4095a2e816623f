public import Foundation

/// The image formats a notification may attach (JPEG, GIF and PNG, up to 10 MB), told from the file's first bytes:
/// a photo URL often has no extension, and without one the system cannot tell what the file is.
public enum AttachmentImageKind: String, Sendable, CaseIterable {
    case jpeg, png, gif

    /// The largest image the system attaches.
    public static let maximumBytes = 10 * 1024 * 1024

    /// The kind of `data`; nil when it is none of the three or larger than the system attaches.
    public init?(sniffing data: Data) {
        guard data.count <= Self.maximumBytes else { return nil }
        let head = [UInt8](data.prefix(8))
        if head.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if head.starts(with: Array("GIF87a".utf8)) || head.starts(with: Array("GIF89a".utf8)) {
            self = .gif
        } else {
            return nil
        }
    }

    /// The file extension the attachment is written with.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .gif: "gif"
        }
    }

    /// The Uniform Type Identifier, for the attachment's type hint option.
    public var uniformTypeIdentifier: String {
        switch self {
        case .jpeg: "public.jpeg"
        case .png: "public.png"
        case .gif: "com.compuserve.gif"
        }
    }

    /// A file name for an image fetched from `url`: its last path component's stem (letters, digits, '-' and '_'
    /// only, at most 64) with this kind's extension, or "rider" when nothing is left.
    public func fileName(for url: URL) -> String {
        let stem = url.deletingPathExtension().lastPathComponent
        let safe = String(
            stem.unicodeScalars.filter {
                $0.isASCII
                    && ($0.properties.isAlphabetic
                        || ("0"..."9").contains($0) || $0 == "-" || $0 == "_")
            }.map(Character.init).prefix(64))
        return (safe.isEmpty ? "rider" : safe) + "." + fileExtension
    }
}
