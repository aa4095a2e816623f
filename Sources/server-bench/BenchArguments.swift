import Foundation

/// `command --name value ...`, with typed lookups and defaults. A bench reads every option it knows in its `init`;
/// `check()` then refuses what none read (a mistyped name), a malformed number and a flag without a value.
final class BenchArguments {
    let command: String
    private var values: [String: String] = [:]
    private var asked: Set<String> = []
    private var problems: [String] = []

    init(_ args: [String]) {
        command = args.first ?? ""
        var i = 1
        while i < args.count {
            guard args[i].hasPrefix("--"), args[i].count > 2 else {
                problems.append("unexpected argument '\(args[i])'"); i += 1; continue
            }
            guard i + 1 < args.count else { problems.append("\(args[i]) needs a value"); break }
            values[String(args[i].dropFirst(2))] = args[i + 1]
            i += 2
        }
    }

    func int(_ name: String, _ fallback: Int) -> Int { parsed(name, fallback, "a whole number", Int.init) }
    func double(_ name: String, _ fallback: Double) -> Double { parsed(name, fallback, "a number", Double.init) }
    func string(_ name: String, _ fallback: String = "") -> String {
        asked.insert(name); return values[name] ?? fallback
    }
    /// One of `choices` (the first is the default).
    func choice(_ name: String, _ choices: [String]) -> String {
        let value = string(name, choices[0])
        guard choices.contains(value) else {
            problems.append("--\(name) must be one of \(choices.joined(separator: ", ")), got '\(value)'");
            return choices[0]
        }
        return value
    }

    /// Throws naming every option no lookup asked for and every value that did not parse.
    func check() throws {
        let unknown = values.keys.filter { !asked.contains($0) }.sorted().map { name in
            "unknown option --\(name)" + (nearest(to: name).map { " (did you mean --\($0)?)" } ?? "")
        }
        let all = problems + unknown
        guard all.isEmpty else {
            throw FanoutBench.Failure(
                description: "\(command): " + all.joined(separator: "; ") + " (options: "
                    + asked.sorted().map { "--" + $0 }.joined(separator: " ") + ")")
        }
    }

    private func parsed<T>(_ name: String, _ fallback: T, _ what: String, _ parse: (String) -> T?) -> T {
        asked.insert(name)
        guard let raw = values[name] else { return fallback }
        guard let value = parse(raw) else {
            problems.append("--\(name) must be \(what), got '\(raw)'"); return fallback
        }
        return value
    }

    /// The known option closest to `name` by edit distance, when it is close.
    private func nearest(to name: String) -> String? {
        func distance(_ a: [Character], _ b: [Character]) -> Int {
            var row = Array(0...b.count)
            for i in 1...max(1, a.count) where !a.isEmpty {
                var previous = row[0]
                row[0] = i
                for j in stride(from: 1, through: b.count, by: 1) {
                    let kept = row[j]
                    row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                    previous = kept
                }
            }
            return a.isEmpty ? b.count : row[b.count]
        }
        let scored = asked.map { ($0, distance(Array(name), Array($0))) }.min { ($0.1, $0.0) < ($1.1, $1.0) }
        return scored.flatMap { $0.1 <= max(2, name.count / 3) ? $0.0 : nil }
    }
}
