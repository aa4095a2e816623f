import Foundation
import EnRouteBackend
import EnRouteDomain

/// `enroute serve`'s smaller settings: where the data lives, the node's name, the cities and time zone, the
/// dispatcher's limits, the public URL and the maps' Leaflet.
extension ServeCommand {
    /// `--store` (an SQLite path or a postgres:// URL) or `--db`; a URL of another scheme is refused by name.
    static func storage(_ options: Options) throws -> BackendConfiguration.Storage {
        guard let (store, source) = options.sourced("store") else {
            return .sqlite(path: options.string("db") ?? "./enroute.sqlite")
        }
        if options.sourced("db") != nil { throw CLIError("give the database once: \(source) or --db, not both") }
        guard let scheme = store.range(of: "://").map({ store[..<$0.lowerBound].lowercased() }) else {
            return .sqlite(path: store)
        }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw CLIError(
                "\(source): unknown scheme '\(scheme)://' (give an SQLite file path or postgres://user@host:port/db)")
        }
        return .postgres(url: store)
    }

    /// The storage for the log: the file, or the URL without its password.
    static func describe(_ storage: BackendConfiguration.Storage) -> String {
        switch storage {
        case .memory: "in memory"
        case .sqlite(let path): "database \(path)"
        case .postgres(let url, _): "PostgreSQL " + url.replacing(/:[^:@\/]*@/, with: ":***@")
        }
    }

    /// `--node`, or host-pid.
    static func nodeName(_ options: Options) throws -> String {
        guard let (name, source) = options.sourced("node") else {
            return "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)"
        }
        guard !name.isEmpty, name.count <= 64,
            name.unicodeScalars.allSatisfy({
                CharacterSet.alphanumerics.contains($0) && $0.isASCII || $0 == "-" || $0 == "_"
            })
        else {
            throw CLIError("\(source) must be 1 to 64 letters, digits, '-' or '_', got '\(name)'")
        }
        return name
    }

    /// The cities from `--cities FILE`, one city everywhere when none is given.
    static func cities(_ options: Options) throws -> Cities {
        guard let (path, source) = options.sourced("cities") else { return .everywhere }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError("\(source): cannot read \(path)")
        }
        do { return try Cities.load(geoJSON: data) } catch { throw CLIError("\(source) \(path): \(error)") }
    }

    /// The service area's zone from `--time-zone`, UTC when none is given.
    static func timeZone(_ options: Options) throws -> TimeZone {
        guard let (name, source) = options.sourced("time-zone") else { return TimeZone(identifier: "UTC")! }
        guard let zone = TimeZone(identifier: name) else {
            throw CLIError("\(source) must be an IANA time zone such as Europe/Helsinki or UTC, got '\(name)'")
        }
        return zone
    }

    /// The dispatcher's limits from flags and environment, defaults otherwise.
    static func dispatchPolicy(_ options: Options) throws -> DispatchPolicy {
        var policy = DispatchPolicy()
        if let s = try options.int("offer-timeout", in: 1...Int.max) { policy.offerTimeout = .seconds(s) }
        if let n = try options.int("dispatch-candidates", in: 1...Int.max) { policy.maxCandidates = n }
        if let s = try options.int("dispatch-limit", in: 1...Int.max) { policy.searchLimit = .seconds(s) }
        if let s = try options.int("delivery-retry", in: 1...Int.max) { policy.deliveryRetry = .seconds(s) }
        try readMatching(options, into: &policy)
        return policy
    }

    /// The flags `enroute serve` and `enroute simulate` share: `--dispatch greedy|batched`, `--dispatch-window S`,
    /// `--delivery-assignment now|late`, `--stack-capacity N` and `--stack-limit S`.
    static let matchingFlags = ["dispatch", "dispatch-window", "delivery-assignment", "stack-capacity", "stack-limit"]

    /// The `matchingFlags` into `policy`.
    static func readMatching(_ options: Options, into policy: inout DispatchPolicy) throws {
        if let (name, source) = options.sourced("dispatch") {
            guard let matching = DispatchMatching(rawValue: name) else {
                throw CLIError("\(source) must be greedy or batched, got '\(name)'")
            }
            policy.matching = matching
        }
        if let s = try options.double("dispatch-window", in: 0.1...30) {
            policy.batchWindow = .milliseconds(Int64((s * 1000).rounded()))
        }
        if let (name, source) = options.sourced("delivery-assignment") {
            guard let when = DeliveryAssignment(rawValue: name) else {
                throw CLIError("\(source) must be now or late, got '\(name)'")
            }
            policy.deliveryAssignment = when
        }
        if let n = try options.int("stack-capacity", in: 1...8) { policy.stackCapacity = n }
        if let s = try options.int("stack-limit", in: 0...3_600) { policy.stackLimit = .seconds(s) }
    }

    /// `--public-url`: an http(s) base URL with a host; by default where the server listens.
    static func publicURL(_ options: Options, host: String, port: UInt16) throws -> URL {
        guard let (text, source) = options.sourced("public-url") else {
            return URL(string: "http://\(host == "0.0.0.0" ? "127.0.0.1" : host):\(port)")!
        }
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
            throw CLIError("\(source): \(text) is not an http(s) URL with a host")
        }
        return url
    }

    /// Logs plainly when the maps' Leaflet is missing; the pages still work and say so where the map would be.
    static func checkLeaflet(_ directory: String) {
        if !FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent("leaflet.js")) {
            log(
                "web: Leaflet not found in \(directory): the share page and /ops show no map (run "
                    + "scripts/install-web.sh or pass --leaflet-dir)"
            )
        }
    }
}
