import Foundation
import Testing
import EnRouteDomain
import EnRouteSQLite
@testable import enroute

/// `enroute seed`: writes the city's directory into the database once, however often it runs.
@Suite struct SeedCommandTests {
    static func database() throws -> (path: String, folder: URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("enroute-seed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (folder.appendingPathComponent("enroute.sqlite").path, folder)
    }

    @Test func seedingHelsinkiTwiceWritesTheDemoDirectoryOnce() async throws {
        let (path, folder) = try Self.database()
        defer { try? FileManager.default.removeItem(at: folder) }
        var lines: [String] = []
        #expect(try await SeedCommand.run(["--city", "helsinki", "--db", path], print: { lines.append($0) }) == 0)
        #expect(try await SeedCommand.run(["--city", "helsinki", "--db", path], print: { lines.append($0) }) == 0)
        #expect(lines.count == 2 && lines[0].hasSuffix("(6 new)") && lines[1].hasSuffix("(0 new)"))
        let directory = try SQLiteDirectory(path: path)
        let merchants = try await directory.merchants(after: nil, limit: 50).items
        #expect(merchants.map(\.id) == ["m1", "m2", "m3"])
        #expect(merchants == DemoCities.helsinki.merchants)
        #expect(merchants.allSatisfy { $0.problem() == nil && !$0.catalogue.isEmpty && $0.openingHours.count >= 5 })
        // What the demo script orders and which courier it signs in as.
        #expect(directory.merchant(id: "m1")?.item(sku: "coffee") != nil)
        #expect(directory.storedProvider(id: "rider-1")?.vehicle != nil)
        #expect(try await directory.providers(after: nil, limit: 50).items.count == DemoCities.helsinki.providers.count)
    }

    @Test func anUnknownCityIsAUsageErrorNamingTheKnownOnes() async throws {
        await #expect(throws: CLIError("unknown city 'atlantis' (known: helsinki)")) {
            try await SeedCommand.run(["--city", "atlantis", "--db", "/nonexistent/never-opened.sqlite"])
        }
        #expect(
            await CommandLineTool.run(["seed", "--city", "atlantis", "--db", "/nonexistent/never-opened.sqlite"]) == 64)
        #expect(await CommandLineTool.run(["seed"]) == 64)
    }
}
