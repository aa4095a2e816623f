public import Foundation

/// A logger in the shape of swift-log's: a label, a level, metadata, and a handler that writes each record. Code that
/// logs takes a `Logger` as a parameter; the composition root picks its handler (text or JSON lines, where they go).
public struct Logger: Sendable {
    /// How much a record matters, from the most verbose to the most severe.
    public enum Level: String, Sendable, Codable, CaseIterable, Comparable {
        case trace, debug, info, notice, warning, error, critical

        public static func < (a: Level, b: Level) -> Bool { a.severity < b.severity }

        /// The level's rank, from 0 for `trace`: compared on every record, so no search of `allCases`.
        private var severity: Int {
            switch self {
            case .trace: 0
            case .debug: 1
            case .info: 2
            case .notice: 3
            case .warning: 4
            case .error: 5
            case .critical: 6
            }
        }
    }

    /// A metadata value: a string, or a list or a dictionary of values.
    public enum MetadataValue: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringLiteral,
        ExpressibleByStringInterpolation, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
    {
        case string(String)
        case array([MetadataValue])
        case dictionary(Metadata)

        public init(stringLiteral value: String) { self = .string(value) }
        public init(arrayLiteral elements: MetadataValue...) { self = .array(elements) }
        public init(dictionaryLiteral elements: (String, MetadataValue)...) {
            self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
        }

        public var description: String {
            switch self {
            case .string(let text): text
            case .array(let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
            case .dictionary(let values):
                "[" + values.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "]"
            }
        }
    }

    /// Key-value fields carried by a record.
    public typealias Metadata = [String: MetadataValue]

    /// A record's text.
    public struct Message: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringLiteral,
        ExpressibleByStringInterpolation
    {
        public var description: String
        public init(stringLiteral value: String) { description = value }
        public init(_ text: String) { description = text }
    }

    /// What the records are about (a subsystem such as `payments` or `http`).
    public let label: String
    /// Where records at or above `logLevel` go.
    public var handler: any LogHandler

    /// A logger labelled `label` writing through `handler`.
    public init(label: String, handler: any LogHandler) {
        self.label = label
        self.handler = handler
    }

    /// The least level written.
    public var logLevel: Level {
        get { handler.logLevel }
        set { handler.logLevel = newValue }
    }

    /// A field every record of this logger carries.
    public subscript(metadataKey key: String) -> MetadataValue? {
        get { handler.metadata[key] }
        set { handler.metadata[key] = newValue }
    }

    /// This logger with `label` (the same handler, level and fields).
    public func labelled(_ label: String) -> Logger { Logger(label: label, handler: handler) }

    /// Writes `message` at `level` with `metadata`, unless the level is below `logLevel` (then nothing is evaluated).
    public func log(
        level: Level, _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil,
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard level >= handler.logLevel else { return }
        handler.log(
            level: level, message: message(), metadata: metadata(), source: label, file: file, function: function,
            line: line)
    }

    /// Writes at `trace`.
    public func trace(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil, file: String = #fileID,
        function: String = #function, line: UInt = #line
    ) { log(level: .trace, message(), metadata: metadata(), file: file, function: function, line: line) }

    /// Writes at `debug`.
    public func debug(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil, file: String = #fileID,
        function: String = #function, line: UInt = #line
    ) { log(level: .debug, message(), metadata: metadata(), file: file, function: function, line: line) }

    /// Writes at `info`.
    public func info(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil, file: String = #fileID,
        function: String = #function, line: UInt = #line
    ) { log(level: .info, message(), metadata: metadata(), file: file, function: function, line: line) }

    /// Writes at `notice`.
    public func notice(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil, file: String = #fileID,
        function: String = #function, line: UInt = #line
    ) { log(level: .notice, message(), metadata: metadata(), file: file, function: function, line: line) }

    /// Writes at `warning`.
    public func warning(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil, file: String = #fileID,
        function: String = #function, line: UInt = #line
    ) { log(level: .warning, message(), metadata: metadata(), file: file, function: function, line: line) }

    /// Writes at `error`.
    public func error(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil, file: String = #fileID,
        function: String = #function, line: UInt = #line
    ) { log(level: .error, message(), metadata: metadata(), file: file, function: function, line: line) }

    /// Writes at `critical`.
    public func critical(
        _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil, file: String = #fileID,
        function: String = #function, line: UInt = #line
    ) { log(level: .critical, message(), metadata: metadata(), file: file, function: function, line: line) }

    /// A logger that writes nothing (tests and benchmarks that do not read the log).
    public static let discard = Logger(label: "discard", handler: DiscardLogHandler())
}

/// Writes a logger's records; swift-log's `LogHandler` has the same requirements.
public protocol LogHandler: Sendable {
    /// Writes one record (its level is at or above `logLevel`).
    func log(
        level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
        function: String, line: UInt)
    /// Fields every record carries.
    var metadata: Logger.Metadata { get set }
    /// The least level written.
    var logLevel: Logger.Level { get set }
}

extension LogHandler {
    /// One field of `metadata`.
    public subscript(metadataKey key: String) -> Logger.MetadataValue? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
}

/// Drops every record.
public struct DiscardLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .critical

    public init() {}

    public func log(
        level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
        function: String, line: UInt
    ) {}
}
