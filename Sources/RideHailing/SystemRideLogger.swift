#if canImport(os)
import os
#else
import Foundation
#endif

/// The logger the seeds' initialisers get when none is given: the unified log on Apple platforms, standard error
/// elsewhere.
public struct SystemRideLogger: RideLogger {
    private let subsystem: String
    private let category: String

    /// A logger for `subsystem` and `category`, as os.Logger names them.
    public init(subsystem: String = "RideHailing", category: String = "tracking") {
        self.subsystem = subsystem
        self.category = category
    }

    /// Records `message` as a warning.
    public func warning(_ message: String) {
        #if canImport(os)
        Logger(subsystem: subsystem, category: category).warning("\(message, privacy: .public)")
        #else
        FileHandle.standardError.write(Data("warning: [\(subsystem)] \(message)\n".utf8))
        #endif
    }
}
