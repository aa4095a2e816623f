import Testing
@testable import enroute

/// Every command refuses what it does not know with exit status 64 before doing anything.
@Suite struct CommandLineToolTests {
    static let specs: [CommandSpec] = [
        ServeCommand.spec, SeedCommand.spec, TokenCommand.spec, TrackCommand.spec, RideCommand.spec, DriveCommand.spec,
        ChatCommand.spec,
    ]

    @Test(arguments: [
        ("serve", ["--prot", "8081"], "unknown option --prot (did you mean --port?)"),
        ("serve", ["--dbb", "x.sqlite"], "unknown option --dbb (did you mean --db?)"),
        ("token", ["--acount", "ana"], "unknown option --acount (did you mean --account?)"),
        ("track", ["o1", "--event"], "unknown option --event (did you mean --events?)"),
        ("ride", ["--form", "60.1,24.9"], "unknown option --form (did you mean --from?)"),
        ("drive", ["--speeed", "10"], "unknown option --speeed (did you mean --speed?)"),
        ("chat", ["T1", "--tokn", "t"], "unknown option --tokn (did you mean --token?)"),
    ])
    func eachCommandRefusesAnUnknownFlagNamingTheClosestOne(command: String, args: [String], message: String) throws {
        let spec = try #require(Self.specs.first { $0.name == command })
        #expect(throws: CLIError(message)) { try spec.parse(args, environment: [:]) }
    }

    @Test(arguments: ["serve", "seed", "token", "track", "ride", "drive"])
    func anUnknownFlagExitsWithUsageStatus(command: String) async {
        #expect(await CommandLineTool.run([command, "--no-such-flag"]) == 64)
    }

    /// `drive`, `track` and `ride` all default `--server` to the local server and need a token.
    @Test(arguments: [TrackCommand.spec, RideCommand.spec, DriveCommand.spec, ChatCommand.spec])
    func theClientCommandsDefaultTheServerAlike(spec: CommandSpec) throws {
        let (url, token) = try Terminal.server(try spec.parse(["--token", "t"], environment: [:]))
        #expect(url.absoluteString == "http://127.0.0.1:8080" && token == "t")
        #expect(throws: CLIError("--token is required (mint one with `enroute token`)")) {
            try Terminal.server(try spec.parse([], environment: [:]))
        }
    }

    @Test func aMalformedPortFromTheEnvironmentIsAUsageError() async throws {
        let options = try ServeCommand.spec.parse([], environment: ["ENROUTE_PORT": "abc"])
        #expect(throws: CLIError("ENROUTE_PORT must be a whole number, got 'abc'")) {
            try options.int("port", in: 0...65535)
        }
    }

    @Test func anUnknownCommandSuggestsTheNearestOne() async {
        #expect(CommandSpec.closest(to: "serv", among: CommandLineTool.commands) == "serve")
        #expect(await CommandLineTool.run(["serv"]) == 64)
    }

    @Test func serveTakesRepeatablePreviousSecretsAndChecksTheirLength() throws {
        let options = try ServeCommand.spec.parse(
            ["--previous-secret", "old-secret-0123456789", "--previous-secret", "short"], environment: [:])
        #expect(options.strings("previous-secret") == ["old-secret-0123456789", "short"])
        #expect(throws: CLIError("a previous JWT secret must be at least 16 bytes (one is 5)")) {
            try Secrets.previousSecrets(options)
        }
    }

    @Test(arguments: ["http://127.0.0.1:8443", "https://", "https://apns.test/3/device", "127.0.0.1:8443"])
    func serveRefusesAnAPNsURLThatIsNotAnHTTPSBase(url: String) throws {
        let options = try ServeCommand.spec.parse(["--apns-url", url], environment: [:])
        #expect(throws: CLIError("--apns-url must be an https base URL such as https://127.0.0.1:8443, got '\(url)'")) {
            try ServeCommand.apnsHost(options)
        }
    }

    @Test func everyCommandsHelpShowsEachOfItsFlags() {
        for spec in Self.specs {
            for option in spec.options {
                #expect(spec.helpText.contains("--\(option.name)"), "\(spec.name) --\(option.name)")
            }
        }
    }
}
