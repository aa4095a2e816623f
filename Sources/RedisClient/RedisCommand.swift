/// One command as RESP sends it: an array of binary-safe byte strings, the command's name first.
public struct RedisCommand: Sendable, Equatable, ExpressibleByArrayLiteral {
    /// The name and arguments, as bytes.
    public var arguments: [[UInt8]]

    /// A command from byte strings.
    public init(_ arguments: [[UInt8]]) { self.arguments = arguments }

    /// A command from text arguments (each sent as its UTF-8).
    public init(strings: [String]) { arguments = strings.map { Array($0.utf8) } }

    /// A command from text literals (each sent as its UTF-8).
    public init(arrayLiteral elements: String...) { arguments = elements.map { Array($0.utf8) } }

    /// The command's name, for messages.
    public var name: String { arguments.first.map { String(decoding: $0, as: UTF8.self).uppercased() } ?? "" }

    /// The command framed as a RESP array of bulk strings.
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    /// Appends the command's RESP framing to `out` (pipelines frame many into one buffer).
    public func encode(into out: inout [UInt8]) {
        out.append(UInt8(ascii: "*"))
        out += Array(String(arguments.count).utf8)
        out += [13, 10]
        for argument in arguments {
            out.append(UInt8(ascii: "$"))
            out += Array(String(argument.count).utf8)
            out += [13, 10]
            out += argument
            out += [13, 10]
        }
    }
}
