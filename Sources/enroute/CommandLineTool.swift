import Foundation

/// `enroute <command>`: dispatches to the subcommands.
enum CommandLineTool {
    static let help = """
        enroute: the EnRoute on-demand platform.

        Usage: enroute <command> [options]

        Commands:
          serve     Run the backend (HTTP API, live streams, storage).
          seed      Write a city's demo merchants and provider profiles into the database.
          token     Mint a development bearer token for an account and role.
          drive     A terminal provider: go online, accept offers, drive a route, report steps.
          track     Follow a delivery as the customer sees it (terminal tracking screen).
          ride      Request a ride and watch it live (terminal rider app).
          chat      Write in a trip's chat and follow it live (customer or provider).
          graph     Build the car road network from an OpenStreetMap PBF file (graph build).
          simulate  A living city on the client kits against a server, with faults, and its report.

        Run `enroute <command> --help` for a command's options.
        """

    static let commands = ["serve", "seed", "token", "drive", "track", "ride", "chat", "graph", "simulate"]

    /// Runs the command line; 0 on success, 64 (EX_USAGE) for a usage error, 1 for any other failure.
    static func run(_ args: [String]) async -> Int32 {
        guard let command = args.first, !["-h", "--help", "help"].contains(command) else {
            print(help)
            return args.isEmpty ? 64 : 0
        }
        let rest = Array(args.dropFirst())
        do {
            switch command {
            case "serve": return try await ServeCommand.run(rest)
            case "seed": return try await SeedCommand.run(rest)
            case "token": return try TokenCommand.run(rest)
            case "drive": return try await DriveCommand.run(rest)
            case "track": return try await TrackCommand.run(rest)
            case "ride": return try await RideCommand.run(rest)
            case "chat": return try await ChatCommand.run(rest)
            case "graph": return try GraphCommand.run(rest)
            case "simulate": return try await SimulateCommand.run(rest)
            default:
                let near = CommandSpec.closest(to: command, among: commands).map { " (did you mean \($0)?)" } ?? ""
                FileHandle.standardError.write(Data("enroute: unknown command '\(command)'\(near)\n\n\(help)\n".utf8))
                return 64
            }
        } catch let error as CLIError {
            FileHandle.standardError.write(Data("enroute \(command): \(error.description)\n".utf8))
            return 64
        } catch {
            FileHandle.standardError.write(Data("enroute \(command): \(error)\n".utf8))
            return 1
        }
    }
}
