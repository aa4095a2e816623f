import Foundation

/// Small JSON objects as compact text with sorted keys (JWT headers and claims).
enum JSONText {
    static func object(_ value: [String: any Sendable]) throws -> String {
        String(
            decoding: try JSONSerialization.data(
                withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }
}
