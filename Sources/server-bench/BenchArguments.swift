import Foundation

/// `command --name value ...`, with typed lookups and defaults.
struct BenchArguments {
    let command: String
    private var values: [String: String] = [:]

    init(_ args: [String]) {
        command = args.first ?? ""
        var i = 1
        while i + 1 < args.count, args[i].hasPrefix("--") {
            values[String(args[i].dropFirst(2))] = args[i + 1]
            i += 2
        }
    }

    func int(_ name: String, _ fallback: Int) -> Int { values[name].flatMap(Int.init) ?? fallback }
    func double(_ name: String, _ fallback: Double) -> Double { values[name].flatMap(Double.init) ?? fallback }
    func string(_ name: String, _ fallback: String = "") -> String { values[name] ?? fallback }
}
