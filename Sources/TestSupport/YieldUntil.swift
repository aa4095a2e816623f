/// Lets other tasks run until `condition` holds, and says whether it did; never sleeps. Gives up after
/// `yields` turns, so a condition that never holds fails its test instead of hanging it.
public func yieldUntil(yields: Int = 200_000, _ condition: () -> Bool) async -> Bool {
    for _ in 0..<yields {
        if condition() { return true }
        await Task.yield()
    }
    return condition()
}
