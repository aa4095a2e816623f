import Foundation

/// One flag a command knows: its name, whether it takes a value, its environment variable and its help.
struct OptionSpec: Sendable {
    /// The name without the leading `--`.
    let name: String
    /// The value's placeholder in the help (`N`, `PATH`); nil for a switch, which takes no value.
    let placeholder: String?
    /// The environment variable read when the flag is absent.
    let env: String?
    /// Whether the flag may be given more than once (`strings(_:)` returns every value).
    let repeatable: Bool
    /// The help text; `\n` starts an indented continuation line.
    let help: String

    /// A flag that takes a value.
    static func value(
        _ name: String, _ placeholder: String, env: String? = nil, repeatable: Bool = false, _ help: String
    ) -> OptionSpec {
        OptionSpec(name: name, placeholder: placeholder, env: env, repeatable: repeatable, help: help)
    }

    /// A switch: present or not, no value.
    static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, placeholder: nil, env: nil, repeatable: false, help: help)
    }
}

/// A command's declared options; `parse` refuses anything it does not declare.
struct CommandSpec: Sendable {
    /// The subcommand's name (`serve`), used in messages.
    let name: String
    /// The usage line(s) and the prose before the options.
    let synopsis: String
    /// Option groups, each with an optional heading.
    let sections: [(title: String?, options: [OptionSpec])]
    /// How many positional arguments the command takes at most.
    let positionals: Int
    /// Prose after the options.
    let footer: String

    init(
        name: String, synopsis: String, sections: [(title: String?, options: [OptionSpec])], positionals: Int = 0,
        footer: String = ""
    ) {
        self.name = name
        self.synopsis = synopsis
        self.sections = sections
        self.positionals = positionals
        self.footer = footer
    }

    /// Every declared option plus `--help`.
    var options: [OptionSpec] { sections.flatMap(\.options) + [Self.help] }

    static let help = OptionSpec.flag("help", "This text.")

    /// The command's help: synopsis, options in aligned columns, footer.
    var helpText: String {
        let label = { (o: OptionSpec) in "--\(o.name)" + (o.placeholder.map { " \($0)" } ?? "") }
        let width = min(24, options.map { label($0).count }.max() ?? 0) + 2
        var lines = [synopsis, ""]
        for (index, section) in sections.enumerated() {
            if let title = section.title { lines.append((index > 0 ? "\n" : "") + title) }
            for option in section.options + (index == sections.count - 1 ? [Self.help] : []) {
                let helpLines = option.help.split(separator: "\n", omittingEmptySubsequences: false)
                let head = "  " + label(option)
                let pad = head.count < width + 2 ? String(repeating: " ", count: width + 2 - head.count) : "  "
                lines.append(head + pad + (helpLines.first.map(String.init) ?? ""))
                for more in helpLines.dropFirst() { lines.append(String(repeating: " ", count: width + 2) + more) }
            }
        }
        if !footer.isEmpty { lines += ["", footer] }
        return lines.joined(separator: "\n")
    }

    /// Parses `args` against the declared options; `environment` backs flags that name a variable.
    func parse(
        _ args: [String], environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(CLIError) -> Options {
        let known = Dictionary(options.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var values: [String: [String]] = [:]
        var switches: Set<String> = []
        var positional: [String] = []
        var i = 0
        var onlyPositional = false
        while i < args.count {
            let arg = args[i]
            i += 1
            if onlyPositional || arg == "-" || !arg.hasPrefix("-") {
                guard positional.count < positionals else {
                    throw CLIError(
                        positionals == 0
                            ? "unexpected argument '\(arg)' (\(name) takes only options; see `enroute \(name) --help`)"
                            : "unexpected extra argument '\(arg)' (see `enroute \(name) --help`)")
                }
                positional.append(arg)
                continue
            }
            if arg == "--" { onlyPositional = true; continue }
            if arg == "-h" { switches.insert("help"); continue }
            guard arg.hasPrefix("--"), arg.count > 2 else { throw unknown(arg) }
            var name = String(arg.dropFirst(2))
            var inline: String?
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            guard let option = known[name] else { throw unknown("--" + name) }
            guard option.placeholder != nil else {
                if inline != nil { throw CLIError("--\(name) takes no value") }
                switches.insert(name)
                continue
            }
            let value: String
            if let inline {
                value = inline
            } else {
                // `--token --server URL` forgot the token's value: the next flag is not it.
                guard i < args.count, !Self.isFlag(args[i], known: known) else {
                    throw CLIError("--\(name) needs a value (\(option.placeholder!))")
                }
                value = args[i]
                i += 1
            }
            if values[name] != nil, !option.repeatable { throw CLIError("--\(name) is given more than once") }
            values[name, default: []].append(value)
        }
        return Options(
            command: name, known: known, values: values, switches: switches, positional: positional,
            environment: environment)
    }

    private static func isFlag(_ arg: String, known: [String: OptionSpec]) -> Bool {
        guard arg.hasPrefix("--") else { return false }
        let name = arg.dropFirst(2).split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
        return known[name] != nil
    }

    /// "unknown option --prot (did you mean --port?)".
    private func unknown(_ flag: String) -> CLIError {
        let typed = flag.drop(while: { $0 == "-" }).split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
        if let near = Self.closest(to: typed, among: options.map(\.name)) {
            return CLIError("unknown option \(flag) (did you mean --\(near)?)")
        }
        return CLIError("unknown option \(flag) (see `enroute \(name) --help` for the options)")
    }

    /// The candidate nearest `word` by edit distance (a swap of neighbours counts one), if it is near enough to be a
    /// typo.
    static func closest(to word: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(word, $0)) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        // A prefix (`--max-conn`) counts as near; otherwise allow about one edit per three letters, at least two.
        if let prefixed = candidates.first(where: { word.count >= 3 && $0.hasPrefix(word) }), best.1 > 1 {
            return prefixed
        }
        return best.1 <= max(2, word.count / 3) && best.1 < max(word.count, best.0.count) ? best.0 : nil
    }

    /// Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent swaps.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}

/// A command line parsed against its `CommandSpec`, with environment fallbacks; reading a value checks its form.
struct Options {
    let command: String
    private let known: [String: OptionSpec]
    private let values: [String: [String]]
    private let switches: Set<String>
    /// Arguments that are not options, in order.
    let positional: [String]
    private let environment: [String: String]

    fileprivate init(
        command: String, known: [String: OptionSpec], values: [String: [String]], switches: Set<String>,
        positional: [String], environment: [String: String]
    ) {
        self.command = command; self.known = known; self.values = values; self.switches = switches
        self.positional = positional; self.environment = environment
    }

    /// Where a value came from, as a message names it: `--port` or `ENROUTE_PORT`.
    private func spec(_ name: String) -> OptionSpec {
        guard let spec = known[name] else {
            preconditionFailure("enroute \(command) reads --\(name), which its CommandSpec does not declare")
        }
        return spec
    }

    /// The flag's value (the last, if repeatable), else its environment variable's (empty counts as unset), with its
    /// source.
    func sourced(_ name: String) -> (value: String, source: String)? {
        let spec = spec(name)
        if let value = values[name]?.last { return (value, "--\(name)") }
        if let env = spec.env, let value = environment[env], !value.isEmpty { return (value, env) }
        return nil
    }

    /// The flag's value, else its environment variable's, else nil.
    func string(_ name: String) -> String? { sourced(name)?.value }

    /// An environment variable no flag stands for (a secret that must not appear in a process listing); empty counts as
    /// unset.
    func secret(_ variable: String) -> String? { environment[variable].flatMap { $0.isEmpty ? nil : $0 } }

    /// Every value of a repeatable flag, else its environment variable's comma-separated list.
    func strings(_ name: String) -> [String] {
        let spec = spec(name)
        if let given = values[name] { return given }
        guard let env = spec.env, let text = environment[env] else { return [] }
        return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// A whole number within `range`; a malformed or out-of-range value is an error naming its flag or variable.
    func int(_ name: String, in range: ClosedRange<Int>? = nil) throws(CLIError) -> Int? {
        guard let (text, source) = sourced(name) else { return nil }
        guard let value = Int(text) else { throw CLIError("\(source) must be a whole number, got '\(text)'") }
        if let range, !range.contains(value) {
            let bounds =
                range.upperBound == Int.max
                ? "at least \(range.lowerBound)" : "\(range.lowerBound)...\(range.upperBound)"
            throw CLIError("\(source) must be \(bounds), got \(value)")
        }
        return value
    }

    /// A number within `range`; a malformed or out-of-range value is an error naming its flag or variable.
    func double(_ name: String, in range: ClosedRange<Double>) throws(CLIError) -> Double? {
        guard let (text, source) = sourced(name) else { return nil }
        guard let value = Double(text), value.isFinite else {
            throw CLIError("\(source) must be a number, got '\(text)'")
        }
        guard range.contains(value) else {
            throw CLIError("\(source) must be between \(range.lowerBound) and \(range.upperBound), got \(text)")
        }
        return value
    }

    /// Whether the switch was given.
    func has(_ name: String) -> Bool {
        _ = spec(name)
        return switches.contains(name)
    }
}

/// A usage error: printed as `enroute <command>: <description>`, exit status 64 (EX_USAGE).
struct CLIError: Error, CustomStringConvertible, Equatable {
    let description: String
    init(_ description: String) { self.description = description }
}
