/// A line and column (both from 1) in a speed table's text, and what is wrong there.
public struct SpeedTableError: Error, Equatable, CustomStringConvertible {
    /// The line, from 1.
    public var line: Int
    /// The column, from 1, in characters.
    public var column: Int
    /// What is wrong.
    public var message: String

    /// An error at `line`, `column`.
    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    /// "line L, column C: message".
    public var description: String { "line \(line), column \(column): \(message)" }
}

/// The speed table's text format.
///
/// ```
/// # comments and blank lines are ignored
/// enroute-speeds 1
/// # class  days     24 factors, from 00:00-01:00 to 23:00-24:00
/// primary  mon-fri  1 1 1 1 1 1 0.85 0.65 0.65 0.85 ...
/// *        sat,sun  1 1 1 ...
/// ```
///
/// The first line that is not blank or a comment is the header `enroute-speeds 1`. Each further line names a
/// class (an OSM `highway` value such as `primary_link`, or `*` for all), days (`mon` ... `sun`, ranges such as
/// `mon-fri`, lists such as `sat,sun`, or `*`), then exactly 24 factors in (0, 2]. Later lines override earlier
/// ones; hours no line covers are free-flow (1).
extension TimeOfDaySpeeds {
    /// The header every table starts with.
    public static let textHeader = "enroute-speeds 1"
    static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    /// Parses a table in the text format, or throws the first malformed line and column.
    public init(text: String) throws(SpeedTableError) {
        self.init()
        var sawHeader = false
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = offset + 1
            let content = rawLine.prefix { $0 != "#" }
            let tokens = Self.tokens(of: content)
            guard let first = tokens.first else { continue }
            guard sawHeader else {
                guard tokens.map(\.text).joined(separator: " ") == Self.textHeader else {
                    throw SpeedTableError(
                        line: line, column: first.column, message: "expected the header '\(Self.textHeader)'")
                }
                sawHeader = true
                continue
            }
            let classes: [RoadClass]
            if first.text == "*" {
                classes = RoadClass.allCases
            } else if let roadClass = RoadClass(highway: first.text) {
                classes = [roadClass]
            } else {
                throw SpeedTableError(line: line, column: first.column, message: "unknown road class '\(first.text)'")
            }
            guard tokens.count >= 2 else {
                throw SpeedTableError(
                    line: line, column: content.count + 1, message: "expected days after the road class")
            }
            let days = try Self.days(tokens[1], line: line)
            let values = tokens.dropFirst(2)
            guard values.count == 24 else {
                let column = values.count > 24 ? values[values.startIndex + 24].column : content.count + 1
                throw SpeedTableError(line: line, column: column, message: "expected 24 factors, found \(values.count)")
            }
            var factors: [Double] = []
            for token in values {
                guard let factor = Double(token.text), factor.isFinite else {
                    throw SpeedTableError(line: line, column: token.column, message: "'\(token.text)' is not a number")
                }
                guard factor > 0, factor <= Self.maximumFactor else {
                    throw SpeedTableError(
                        line: line, column: token.column,
                        message: "factor \(token.text) is not in (0, \(Self.maximumFactor)]")
                }
                factors.append(factor)
            }
            for roadClass in classes {
                for day in days {
                    for (hour, factor) in factors.enumerated() {
                        setFactor(factor, for: roadClass, hourOfWeek: day * 24 + hour)
                    }
                }
            }
        }
        guard sawHeader else {
            throw SpeedTableError(line: 1, column: 1, message: "expected the header '\(Self.textHeader)'")
        }
    }

    /// The table in the text format: one line per class and run of consecutive days with the same factors.
    public var text: String {
        var lines = [Self.textHeader, "# class days factors for 00:00-01:00 ... 23:00-24:00"]
        for roadClass in RoadClass.allCases {
            let rows = (0..<7).map { day in (0..<24).map { factor(roadClass, hourOfWeek: day * 24 + $0) } }
            var day = 0
            while day < 7 {
                var end = day
                while end + 1 < 7, rows[end + 1] == rows[day] { end += 1 }
                let days = end == day ? Self.dayNames[day] : "\(Self.dayNames[day])-\(Self.dayNames[end])"
                lines.append(([roadClass.highwayValue, days] + rows[day].map(Self.format)).joined(separator: " "))
                day = end + 1
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func format(_ factor: Double) -> String {
        factor == factor.rounded() ? String(Int(factor)) : "\(factor)"
    }

    private struct Token {
        var text: String
        var column: Int
    }

    private static func tokens(of line: Substring) -> [Token] {
        var tokens: [Token] = []
        var current = "", start = 0
        for (index, character) in line.enumerated() {
            if character == " " || character == "\t" || character == "\r" {
                if !current.isEmpty { tokens.append(Token(text: current, column: start + 1)) }
                current = ""
            } else {
                if current.isEmpty { start = index }
                current.append(character)
            }
        }
        if !current.isEmpty { tokens.append(Token(text: current, column: start + 1)) }
        return tokens
    }

    /// Day indices (0 Monday) from `*`, `mon`, `mon-fri` or `sat,sun`.
    private static func days(_ token: Token, line: Int) throws(SpeedTableError) -> [Int] {
        if token.text == "*" { return Array(0..<7) }
        var result: [Int] = []
        var column = token.column
        for part in token.text.split(separator: ",", omittingEmptySubsequences: false) {
            let ends = part.split(separator: "-", omittingEmptySubsequences: false)
            var indices: [Int] = []
            var partColumn = column
            for end in ends {
                guard let index = dayNames.firstIndex(of: String(end)) else {
                    throw SpeedTableError(
                        line: line, column: partColumn, message: "unknown day '\(end)' (mon ... sun, a range or a list)"
                    )
                }
                indices.append(index)
                partColumn += end.count + 1
            }
            guard indices.count <= 2 else {
                throw SpeedTableError(line: line, column: column, message: "a day range has two ends, as in mon-fri")
            }
            guard indices[0] <= indices[indices.count - 1] else {
                throw SpeedTableError(line: line, column: column, message: "the day range '\(part)' runs backwards")
            }
            result += indices[0]...indices[indices.count - 1]
            column += part.count + 1
        }
        return result
    }
}
