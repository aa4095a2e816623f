#if canImport(Glibc)
import Glibc
#endif

/// Ends the run when a property of the parser under test does not hold: libFuzzer keeps the input that broke it.
/// (`precondition` would trap without its message in an optimised build.)
func property(_ holds: Bool, _ message: @autoclosure () -> String, line: Int = #line) {
    guard !holds else { return }
    let text = Array("property failed (line \(line)): \(message())\n".utf8)
    _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}

/// The points at which a split of `count` bytes is tried: every one for short inputs, else the first and last few
/// and an even spread (each split re-parses the input, so checking every point of a long one would be quadratic).
func splitPoints(_ count: Int, every limit: Int = 128) -> [Int] {
    guard count > limit else { return Array(0...count) }
    return Array(0...8) + Array(stride(from: 9, to: count - 8, by: (count - 17) / 24 + 1)) + Array((count - 8)...count)
}
