/// A pure terminal rendering of the tracking view state, for `enroute track`.
public enum TrackerScreen {
    /// The screen as lines: title, steps, ETA, stops before, rider pin, banner, and "Offline" when the network is down.
    public static func render(_ state: OrderTrackingViewState, offline: Bool) -> [String] {
        var lines = [state.title]
        for row in state.steps {
            let mark =
                switch row.progress {
                case .done: "[x]"
                case .current: "[>]"
                case .upcoming: "[ ]"
                }
            lines.append("  \(mark) \(row.title)")
        }
        if !state.eta.isEmpty { lines.append(state.eta) }
        if let stops = state.stopsBefore { lines.append(stops) }
        switch state.riderPin {
        case .live(let fix):
            lines.append("Rider: live at \(format(fix.coordinate.lat)), \(format(fix.coordinate.lng))")
        case .stale(let fix, let label):
            lines.append("Rider: \(label) at \(format(fix.coordinate.lat)), \(format(fix.coordinate.lng))")
        case .hidden:
            if !state.steps.isEmpty { lines.append("Rider: not shown") }
        }
        if let banner = state.banner { lines.append("! \(banner)") }
        if offline { lines.append("Offline") }
        return lines
    }

    private static func format(_ degrees: Double) -> String {
        let scaled = (degrees * 100_000).rounded()
        let sign = scaled < 0 ? "-" : ""
        let whole = Int(abs(scaled)) / 100_000
        let fraction = String(Int(abs(scaled)) % 100_000)
        return sign + String(whole) + "." + String(repeating: "0", count: 5 - fraction.count) + fraction
    }
}
