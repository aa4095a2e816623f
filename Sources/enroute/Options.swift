import Foundation

/// Parsed `--flag value` options, with environment fallbacks.
struct Options {
    private var values: [String: String] = [:]
    private(set) var positional: [String] = []
    private(set) var flags: Set<String> = []

    /// Parses `args`; flags named in `switches` take no value.
    init(_ args: [String], switches: Set<String> = ["help"]) throws {
        var i = 0
        while i < args.count {
            let arg = args[i]
            if arg == "-h" { flags.insert("help"); i += 1; continue }
            if arg.hasPrefix("--") {
                var name = String(arg.dropFirst(2))
                if let eq = name.firstIndex(of: "=") {
                    values[String(name[..<eq])] = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                } else if switches.contains(name) {
                    flags.insert(name)
                } else {
                    guard i + 1 < args.count else { throw CLIError("--\(name) needs a value") }
                    values[name] = args[i + 1]
                    i += 1
                }
            } else {
                positional.append(arg)
            }
            i += 1
        }
    }

    /// The flag's value, else the environment variable's, else nil.
    func string(_ name: String, env: String? = nil) -> String? {
        values[name] ?? env.flatMap { ProcessInfo.processInfo.environment[$0] }
    }

    func int(_ name: String, env: String? = nil) throws -> Int? {
        guard let text = string(name, env: env) else { return nil }
        guard let value = Int(text) else { throw CLIError("--\(name) must be a whole number, got \(text)") }
        return value
    }

    func has(_ flag: String) -> Bool { flags.contains(flag) }
}

/// A usage error, shown to the user with the command's help.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
