import Testing
@testable import enroute

/// The option parser: only declared flags, well-formed values, environment fallbacks, and messages that name the
/// culprit.
@Suite struct OptionsTests {
    static let spec = CommandSpec(
        name: "demo", synopsis: "Usage: enroute demo",
        sections: [
            (
                nil,
                [
                    .value("port", "N", env: "DEMO_PORT", "A port."),
                    .value("previous-secret", "S", env: "DEMO_PREVIOUS", repeatable: true, "Old secrets."),
                    .value("max-connections", "N", "A cap."),
                    .value("speed", "M/S", "A speed."),
                    .flag("once", "Once."),
                ]
            )
        ], positionals: 1)

    static func failure(_ args: [String], environment: [String: String] = [:]) -> String? {
        do { _ = try spec.parse(args, environment: environment); return nil } catch { return error.description }
    }

    @Test(arguments: [
        (["--prot", "8081"], "unknown option --prot (did you mean --port?)"),
        (["--prot=8081"], "unknown option --prot (did you mean --port?)"),
        (["--max-conn", "5"], "unknown option --max-conn (did you mean --max-connections?)"),
        (["--onc"], "unknown option --onc (did you mean --once?)"),
        (["--zzzzzzzz", "1"], "unknown option --zzzzzzzz (see `enroute demo --help` for the options)"),
        (["-port", "1"], "unknown option -port (did you mean --port?)"),
    ])
    func anUnknownFlagIsRefusedWithTheClosestKnownOne(args: [String], message: String) {
        #expect(Self.failure(args) == message)
    }

    @Test(arguments: [
        (["--port"], "--port needs a value (N)"),
        (["--port", "--once"], "--port needs a value (N)"),
        (["--once=yes"], "--once takes no value"),
        (["--port", "1", "--port", "2"], "--port is given more than once"),
        (["a", "b"], "unexpected extra argument 'b' (see `enroute demo --help`)"),
    ])
    func aMisshapenCommandLineIsRefused(args: [String], message: String) {
        #expect(Self.failure(args) == message)
    }

    @Test func valuesComeFromFlagsThenTheEnvironment() throws {
        let env = ["DEMO_PORT": "9000", "DEMO_PREVIOUS": "old-one-0123456789, old-two-0123456789"]
        let fromEnv = try Self.spec.parse(["order-1"], environment: env)
        #expect(try fromEnv.int("port") == 9000 && fromEnv.positional == ["order-1"])
        #expect(fromEnv.strings("previous-secret") == ["old-one-0123456789", "old-two-0123456789"])
        let fromFlags = try Self.spec.parse(
            ["--port=81", "--previous-secret", "a", "--previous-secret", "b", "--once"], environment: env)
        #expect(
            try fromFlags.int("port") == 81 && fromFlags.strings("previous-secret") == ["a", "b"]
                && fromFlags.has("once"))
        #expect(
            try Self.spec.parse([], environment: ["DEMO_PORT": ""]).int("port") == nil, "an empty variable is unset")
    }

    @Test func aMalformedValueNamesItsFlagOrVariable() throws {
        #expect(throws: CLIError("--port must be a whole number, got 'abc'")) {
            try Self.spec.parse(["--port", "abc"], environment: [:]).int("port")
        }
        #expect(throws: CLIError("DEMO_PORT must be a whole number, got 'abc'")) {
            try Self.spec.parse([], environment: ["DEMO_PORT": "abc"]).int("port")
        }
        #expect(throws: CLIError("--port must be 0...65535, got 70000")) {
            try Self.spec.parse(["--port", "70000"], environment: [:]).int("port", in: 0...65535)
        }
        #expect(throws: CLIError("--max-connections must be at least 1, got 0")) {
            try Self.spec.parse(["--max-connections", "0"], environment: [:]).int("max-connections", in: 1...Int.max)
        }
        #expect(throws: CLIError("--speed must be a number, got 'fast'")) {
            try Self.spec.parse(["--speed", "fast"], environment: [:]).double("speed", in: 0.1...100)
        }
    }

    @Test(arguments: [
        ("prot", "port", 1), ("port", "port", 0), ("kitten", "sitting", 3), ("", "db", 2), ("ab", "ba", 1),
    ])
    func editDistanceCountsAnAdjacentSwapAsOneEdit(a: String, b: String, distance: Int) {
        #expect(CommandSpec.editDistance(a, b) == distance)
    }

    @Test func helpListsEveryDeclaredFlagWithItsPlaceholder() {
        let help = Self.spec.helpText
        for line in ["--port N", "--previous-secret S", "--max-connections N", "--speed M/S", "--once", "--help"] {
            #expect(help.contains("  " + line + " "), "\(line) missing from:\n\(help)")
        }
    }
}
