public import Foundation

/// The request a record belongs to: the HTTP server sets it around each request's handler, and every handler adds it
/// to the records written while it is set, so every line a request causes carries its id.
public enum LogContext {
    /// The id of the request being handled, if any.
    @TaskLocal public static var requestID: String?
}

/// How records are written: `text` for a person at a terminal, `json` for a log pipeline (one object per line).
public enum LogFormat: String, Sendable, CaseIterable {
    case text, json
}

/// Writes each record as one line in a `LogFormat`, stamped with the injected clock, to an injected sink.
public struct StreamLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    /// The line format.
    public let format: LogFormat
    private let now: @Sendable () -> Date
    private let write: @Sendable (String) -> Void

    /// A handler writing `format` lines (without their newline) to `write`, at `level` and above, stamped by `now`.
    public init(
        format: LogFormat, level: Logger.Level = .info, now: @escaping @Sendable () -> Date,
        write: @escaping @Sendable (String) -> Void
    ) {
        self.format = format
        self.logLevel = level
        self.now = now
        self.write = write
    }

    /// A handler writing to standard error, one whole line per write.
    public static func standardError(
        format: LogFormat, level: Logger.Level = .info, now: @escaping @Sendable () -> Date
    ) -> StreamLogHandler {
        StreamLogHandler(format: format, level: level, now: now) { line in
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    public func log(
        level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
        function: String, line: UInt
    ) {
        var fields = self.metadata
        if let metadata { fields.merge(metadata) { _, record in record } }
        if let id = LogContext.requestID { fields["request-id"] = .string(id) }
        let time = Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(now())
        switch format {
        case .text: write(Self.text(time: time, level: level, label: source, message: message, fields: fields))
        case .json: write(Self.json(time: time, level: level, label: source, message: message, fields: fields))
        }
    }

    /// `time level label: message key=value …`, fields in key order, a value quoted when it holds a space, a quote,
    /// an `=` or a control character.
    static func text(
        time: String, level: Logger.Level, label: String, message: Logger.Message, fields: Logger.Metadata
    ) -> String {
        var line = "\(time) \(level.rawValue) \(label): \(message.description)"
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            let text = value.description
            let plain =
                !text.isEmpty
                && !text.unicodeScalars.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0.value < 0x20 }
            line += " \(key)=" + (plain ? text : jsonString(text))
        }
        return line
    }

    /// One JSON object: `time`, `level`, `label` and `message` first, then the fields in key order (a field named as
    /// one of those four is written under `field.<name>`).
    static func json(
        time: String, level: Logger.Level, label: String, message: Logger.Message, fields: Logger.Metadata
    ) -> String {
        let fixed = ["time", "level", "label", "message"]
        var parts = [
            "\"time\":" + jsonString(time), "\"level\":" + jsonString(level.rawValue), "\"label\":" + jsonString(label),
            "\"message\":" + jsonString(message.description),
        ]
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            parts.append(jsonString(fixed.contains(key) ? "field." + key : key) + ":" + jsonValue(value))
        }
        return "{" + parts.joined(separator: ",") + "}"
    }

    static func jsonValue(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let text): jsonString(text)
        case .array(let values): "[" + values.map(jsonValue).joined(separator: ",") + "]"
        case .dictionary(let values):
            "{"
                + values.sorted { $0.key < $1.key }.map { jsonString($0.key) + ":" + jsonValue($0.value) }
                .joined(separator: ",") + "}"
        }
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped.
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
