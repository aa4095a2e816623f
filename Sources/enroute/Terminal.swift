import Foundation

/// In-place redraws for the terminal clients.
enum Terminal {
    /// Clears the screen and writes `lines` from the top-left corner.
    static func redraw(_ lines: [String]) {
        let text = "\u{1B}[H\u{1B}[2J" + lines.joined(separator: "\n") + "\n"
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// Parses `LAT,LNG`.
    static func coordinate(_ text: String?, flag: String) throws -> (lat: Double, lng: Double) {
        guard let text else { throw CLIError("--\(flag) LAT,LNG is required") }
        let parts = text.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 2, (-90...90).contains(parts[0]), (-180...180).contains(parts[1]) else {
            throw CLIError("--\(flag) must be LAT,LNG in degrees, got \(text)")
        }
        return (parts[0], parts[1])
    }

    /// `--server` and `--token`, which every client command takes.
    static func serverOptions(role: String) -> [OptionSpec] {
        [
            .value(
                "server", "URL", env: "ENROUTE_SERVER",
                "The EnRoute server (ENROUTE_SERVER, default http://127.0.0.1:8080)."),
            .value(
                "token", "T", env: "ENROUTE_TOKEN", "A \(role)'s bearer token (ENROUTE_TOKEN); see `enroute token`."),
        ]
    }

    /// The server URL and bearer token every client command takes.
    static func server(_ options: Options) throws -> (URL, String) {
        let (text, source) = options.sourced("server") ?? ("http://127.0.0.1:8080", "--server")
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw CLIError("\(source) must be an http(s) URL, got '\(text)'")
        }
        guard let token = options.string("token"), !token.isEmpty else {
            throw CLIError("--token is required (mint one with `enroute token`)")
        }
        return (url, token)
    }
}
