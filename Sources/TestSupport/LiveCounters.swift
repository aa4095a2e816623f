public import HTTPEngine

/// Live channels over a counter per key, for the channels' tests in memory and over sockets.
public enum LiveCounters {
    /// A counter per key: the opening is a snapshot of it, each publish bumps it and sends the new value.
    public static func counters(initial: @escaping @Sendable (String) -> Int? = { _ in 0 }) -> LiveChannels<String, Int>
    {
        LiveChannels(initial: initial, opening: { n in LiveUpdate(events: [event("snapshot", n)]) })
    }

    /// An event named `name` carrying `n` as its id and in its data.
    public static func event(_ name: String, _ n: Int) -> LiveEvent {
        LiveEvent(name: name, id: "\(n)", data: Array(#"{"n":\#(n)}"#.utf8))
    }

    /// Bumps `key`'s counter and sends the new value, ending the channel when `ends`.
    public static func bump(_ channels: LiveChannels<String, Int>, _ key: String = "k", ends: Bool = false) {
        channels.publish(key) { n in
            n += 1
            return LiveUpdate(events: [event("count", n)], ends: ends)
        }
    }

    /// The ids of the SSE events in `text`, in order.
    public static func ids(_ text: String) -> [Int] {
        text.split(separator: "\n").compactMap { $0.hasPrefix("id: ") ? Int($0.dropFirst(4)) : nil }
    }
}
