import Testing

/// Lets other tasks run until `condition` holds on the main actor; fails instead of hanging. Never sleeps.
@MainActor
func waitUntil(_ what: Comment = "condition", sourceLocation: SourceLocation = #_sourceLocation,
               _ condition: @MainActor () -> Bool) async throws {
    for _ in 0..<100_000 where !condition() {
        await Task.yield()
    }
    try #require(condition(), "timed out waiting for \(what)", sourceLocation: sourceLocation)
}
