import Foundation
import EnRouteLogging
import HTTPTransport
import CurlTransport
import EnRouteDomain
import EnRouteRoads
import Routing

/// `enroute serve`'s roads: EnRoute's own graph or an external OSRM, and the live speeds over the graph.
extension ServeCommand {
    /// A graph file that `--graph` names but the server cannot load.
    struct GraphError: Error, CustomStringConvertible, Equatable {
        let description: String
    }

    /// The roads the server routes on: EnRoute's graph (`--router graph`, the default, needs `--graph`), an
    /// external OSRM (`--router osrm --osrm-url URL`), or none when neither is asked for.
    static func loadRoads(
        _ options: Options, makeClient: () -> any HTTPClient = { CurlHTTPClient() }
    ) throws -> (any RoadRouting)? {
        let router = options.sourced("router")
        switch router?.0 {
        case nil, "graph":
            if let (_, source) = options.sourced("osrm-url") {
                throw CLIError("\(source) is for --router osrm, not --router graph")
            }
            if router != nil, options.sourced("graph") == nil {
                throw CLIError("--router graph needs --graph FILE (from `enroute graph build`)")
            }
            return try loadGraph(options)
        case "osrm":
            guard let (text, source) = options.sourced("osrm-url") else {
                throw CLIError(
                    "--router osrm needs --osrm-url URL, the OSRM server's base URL such as http://127.0.0.1:5000")
            }
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil,
                url.query == nil
            else {
                throw CLIError("\(source) must be an http(s) base URL such as http://127.0.0.1:5000, got '\(text)'")
            }
            if options.sourced("graph") != nil {
                throw CLIError("--graph is for --router graph; with --router osrm the roads are OSRM's")
            }
            log("roads: OSRM at \(text)")
            return OSRMRoadRouting(baseURL: url, client: makeClient())
        case let other?:
            throw CLIError("\(router!.1) must be graph or osrm, got '\(other)'")
        }
    }

    /// The road network from `--graph` as the server routes on it, nil when none is given; logs its size and load
    /// time (the file's stored hierarchy is used; a file without one has it built here, with a log line).
    static func loadGraph(_ options: Options) throws -> LocalRoadRouting? {
        guard let (path, source) = options.sourced("graph") else { return nil }
        let clock = ContinuousClock()
        let start = clock.now
        let loaded: RoadGraphFile.Loaded
        do {
            loaded = try RoadGraphFile.load(path, log: { log($0) })
        } catch {
            throw GraphError(description: "cannot load the graph file given by \(source): \(error)")
        }
        let network = loaded.network
        let roads = LocalRoadRouting(graph: .init(network: network, graph: loaded.graph, hierarchy: loaded.hierarchy))
        let elapsed = (clock.now - start).components
        let milliseconds = Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15
        log(
            "road graph \(path): \(network.nodeCount) nodes, \(network.edgeCount) edges, "
                + "\(loaded.hierarchy.shortcutCount) shortcuts"
                + " (hierarchy \(loaded.hierarchyWasStored ? "stored" : "built at load")), ready in "
                + "\(String(format: "%.1f", milliseconds)) ms"
        )
        return roads
    }

    /// Live speeds over EnRoute's own graph unless `--live-speeds off`; nil for an external router or no roads.
    static func liveSpeeds(_ options: Options, roads: (any RoadRouting)?, timeZone: TimeZone) throws -> LiveRoadSpeeds?
    {
        let setting = options.sourced("live-speeds")
        switch setting?.value {
        case nil, "on": break
        case "off": return nil
        case let other?: throw CLIError("\(setting!.source) must be on or off, got '\(other)'")
        }
        var profile = TimeOfDaySpeeds.standard
        if let (path, source) = options.sourced("speed-table") {
            let text: String
            do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
                throw CLIError("\(source): cannot read \(path): \(error.localizedDescription)")
            }
            do { profile = try TimeOfDaySpeeds(text: text) } catch { throw CLIError("\(source): \(path): \(error)") }
        }
        guard let local = roads as? LocalRoadRouting else {
            if setting != nil || options.sourced("speed-table") != nil {
                throw CLIError(
                    "live speeds need EnRoute's own graph (--router graph --graph FILE); an external router "
                        + "keeps its own"
                )
            }
            return nil
        }
        log("road speeds: time-of-day table (\(timeZone.identifier)) and providers' fixes, applied every 30 s")
        return LiveRoadSpeeds(
            roads: local, profile: profile, options: .init(timeZone: timeZone), log: logger.withLock { $0 })
    }
}
