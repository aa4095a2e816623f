/// How the rider may be drawn on the map, given how old her fix is.
public enum RiderPin: Equatable, Sendable {
    /// Fresh enough to show as current.
    case live(RiderFix)
    /// Shown dimmed with its age ("Updated 40 s ago").
    case stale(RiderFix, label: String)
    /// No fix, or too old to show.
    case hidden
}
