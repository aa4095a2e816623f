extension Clock where Duration == Swift.Duration {
    /// Sleeps for `duration` as a run of sleeps of at most `step`.
    ///
    /// The runtime cannot take back a timer it armed: a sleep cancelled early keeps its memory (about 700 bytes) until
    /// its deadline. A long wait that is usually cut short (a search waiting for supply, a loop's pause ended by a
    /// wake)
    /// therefore arms short timers, so what a cancelled one leaves behind is freed within `step`.
    public func sleep(for duration: Duration, inStepsOf step: Duration) async throws {
        let end = now.advanced(by: duration)
        while now < end {
            try await sleep(until: Swift.min(end, now.advanced(by: step)), tolerance: nil)
        }
    }
}

/// The longest single timer the server's waits arm (see `Clock.sleep(for:inStepsOf:)`).
let longestTimer: Duration = .seconds(1)
