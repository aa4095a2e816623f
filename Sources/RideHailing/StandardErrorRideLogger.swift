import Foundation

/// A `RideLogger` that writes each warning as one line on standard error, for tools.
public struct StandardErrorRideLogger: RideLogger {
    /// A logger for the standard error stream.
    public init() {}

    /// Writes `warning: <message>` on its own line.
    public func warning(_ message: String) {
        FileHandle.standardError.write(Data("warning: \(message)\n".utf8))
    }
}
