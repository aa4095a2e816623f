public import Foundation
import Synchronization

/// Makes ids for trips and other records.
public protocol IDGenerator: Sendable {
    /// A new unique id.
    func next() -> String
}

/// Random ids from the system CSPRNG (getrandom on Linux, arc4random on Apple platforms): 12 characters of Crockford
/// base32 (60 bits).
public struct RandomIDGenerator: IDGenerator {
    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    public init() {}
    public func next() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<12).map { _ in Self.alphabet[Int(generator.next() & 31)] })
    }
}

/// Ids `prefix1`, `prefix2`, ... in order, for tests and reproducible demos.
public final class SequentialIDGenerator: IDGenerator {
    private let counter = Mutex(0)
    private let prefix: String
    public init(prefix: String = "T") { self.prefix = prefix }
    public func next() -> String {
        prefix
            + String(
                counter.withLock {
                    $0 += 1; return $0
                })
    }
}
